package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

import io.github.ratelimit.internal.core.CountedOutcomes;

/**
 * Reads which final HTTP response statuses a limit counts, written as codes
 * ({@code "401"}) or classes ({@code "4xx"}), as {@code countStatuses} on
 * {@code @RateLimited} and {@code count-statuses} in properties say them. The result is
 * the {@link CountedOutcomes} the limit carries, whose outcome codes are the statuses.
 */
public final class CountedStatuses {

	private CountedStatuses() {
	}

	/**
	 * Parses statuses as written in configuration: codes from 100 to 599 and classes from
	 * {@code 1xx} to {@code 5xx} (case and surrounding blanks ignored).
	 * @param values the statuses; {@code null} or empty means every status counts
	 * @return the statuses
	 * @throws IllegalArgumentException naming the first value that is neither
	 */
	public static CountedOutcomes parse(List<String> values) {
		if (values == null || values.isEmpty()) {
			return CountedOutcomes.ALL;
		}
		BitSet statuses = new BitSet(600);
		List<String> spelled = new ArrayList<>(values.size());
		for (String value : values) {
			String text = (value != null) ? value.trim().toLowerCase(Locale.ROOT) : "";
			if (text.matches("[1-5]xx")) {
				int first = (text.charAt(0) - '0') * 100;
				statuses.set(first, first + 100);
			}
			else if (text.matches("[1-5][0-9][0-9]")) {
				statuses.set(Integer.parseInt(text));
			}
			else {
				throw new IllegalArgumentException("'" + value
						+ "' is neither a status code from 100 to 599 nor a status class from 1xx to 5xx");
			}
			spelled.add(text);
		}
		return CountedOutcomes.of(statuses, spelled);
	}

}

package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

/**
 * Which final HTTP response statuses a limit counts, written as codes ({@code "401"}) or
 * classes ({@code "4xx"}). A request whose status is not counted is given back what it
 * consumed once its response is final. {@link #ALL} (no status named) counts every
 * request, whatever its answer.
 */
public final class CountedStatuses {

	/** Counts every status: nothing is given back. */
	public static final CountedStatuses ALL = new CountedStatuses(List.of(), null);

	/**
	 * Counts no status: everything is given back once the response is final, as a
	 * concurrency limit's permits are when the call completes.
	 */
	public static final CountedStatuses NONE = new CountedStatuses(List.of(), new BitSet(0));

	private final List<String> spelled;

	private final BitSet statuses;

	private CountedStatuses(List<String> spelled, BitSet statuses) {
		this.spelled = spelled;
		this.statuses = statuses;
	}

	/**
	 * Parses statuses as written in configuration: codes from 100 to 599 and classes from
	 * {@code 1xx} to {@code 5xx} (case ignored).
	 * @param values the statuses; {@code null} or empty means {@link #ALL}
	 * @return the statuses
	 * @throws IllegalArgumentException naming the first value that is neither
	 */
	public static CountedStatuses of(List<String> values) {
		if (values == null || values.isEmpty()) {
			return ALL;
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
		return new CountedStatuses(List.copyOf(spelled), statuses);
	}

	/**
	 * Whether a request answered with a status counts against the limit.
	 * @param status the final response status
	 * @return whether it counts; always for {@link #ALL}
	 */
	public boolean counts(int status) {
		return this.statuses == null || (status >= 0 && this.statuses.get(status));
	}

	/**
	 * Whether every status counts, so that nothing is ever given back.
	 * @return whether these are {@link #ALL}
	 */
	public boolean countsAll() {
		return this.statuses == null;
	}

	/**
	 * The statuses as written, lowercase.
	 * @return the statuses, empty for {@link #ALL}
	 */
	public List<String> values() {
		return this.spelled;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof CountedStatuses that && this.spelled.equals(that.spelled);
	}

	@Override
	public int hashCode() {
		return this.spelled.hashCode();
	}

	@Override
	public String toString() {
		return countsAll() ? "all" : String.join(",", this.spelled);
	}

}

package io.github.ratelimit.sample;

import java.util.regex.Pattern;

/**
 * Brings the ways people write one phone number to one form, so that a limit keyed on the
 * number sees one identity: {@code +1 (555) 123-4567}, {@code +15551234567},
 * {@code 15551234567} and {@code 0015551234567} are all {@code +15551234567}.
 * <p>
 * The rule: drop spaces, dots, dashes, slashes and parentheses; a leading {@code 00} (the
 * international call prefix) becomes {@code +}; a number without {@code +} is read as
 * already starting with its country code. A national number with a trunk prefix
 * ({@code 0555…}) is not guessed into an international one: it stays {@code +0555…},
 * which {@link #isValid} refuses, since no country code starts with 0.
 */
public final class PhoneNumbers {

	private static final Pattern FORMATTING = Pattern.compile("[\\s./()-]");

	/** E.164: a country code that does not start with 0, and at most 15 digits in all. */
	private static final Pattern INTERNATIONAL = Pattern.compile("\\+[1-9][0-9]{5,14}");

	private PhoneNumbers() {
	}

	/**
	 * The one form of a phone number.
	 * @param number the number as written, or {@code null}
	 * @return {@code +} and digits, or {@code null} for {@code null}
	 */
	public static String normalize(String number) {
		if (number == null) {
			return null;
		}
		String compact = FORMATTING.matcher(number).replaceAll("");
		if (compact.startsWith("+")) {
			return compact;
		}
		if (compact.startsWith("00")) {
			return "+" + compact.substring(2);
		}
		return "+" + compact;
	}

	/**
	 * Whether a normalised number is an international number the gateway can send to.
	 * @param normalized a result of {@link #normalize}
	 * @return whether it is {@code +}, a country code and 6 to 15 digits in all
	 */
	public static boolean isValid(String normalized) {
		return normalized != null && INTERNATIONAL.matcher(normalized).matches();
	}

}

package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PhoneNumbersTests {

	@Test
	void writingsOfOneInternationalNumberBecomeOne() {
		assertThat(new String[] { "+15551234567", "15551234567", "0015551234567", "+1 (555) 123-4567",
				"00 1 555.123.4567", "+1/555/123 45 67" })
			.extracting(PhoneNumbers::normalize)
			.containsOnly("+15551234567");
	}

	@Test
	void otherNumbersStayApart() {
		assertThat(PhoneNumbers.normalize("+15551234568")).isEqualTo("+15551234568");
		assertThat(PhoneNumbers.normalize("+445551234567")).isEqualTo("+445551234567");
	}

	@Test
	void refusesNationalNumbersWhoseCountryIsUnknown() {
		assertThat(PhoneNumbers.normalize("0555 123 4567")).isEqualTo("+05551234567");
		assertThat(PhoneNumbers.isValid(PhoneNumbers.normalize("0555 123 4567"))).isFalse();
		assertThat(PhoneNumbers.isValid(PhoneNumbers.normalize("00 1 555 123 4567"))).isTrue();
	}

	@Test
	void refusesWhatIsNotAPhoneNumber() {
		assertThat(PhoneNumbers.normalize(null)).isNull();
		assertThat(PhoneNumbers.isValid(null)).isFalse();
		assertThat(PhoneNumbers.isValid(PhoneNumbers.normalize("+1 555 CALL NOW"))).isFalse();
		assertThat(PhoneNumbers.isValid(PhoneNumbers.normalize("+1234"))).isFalse();
		assertThat(PhoneNumbers.isValid(PhoneNumbers.normalize("+1234567890123456"))).isFalse();
	}

}

package io.github.ratelimit.test;

import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

import org.assertj.core.api.AbstractObjectAssert;
import org.assertj.core.api.Assertions;
import org.assertj.core.api.ListAssert;

/**
 * AssertJ assertions on the decisions a {@link RateLimitDecisions} recorded; obtained with
 * {@code assertThat(decisions)}. Failure messages list every decision recorded.
 */
public class RateLimitDecisionsAssert extends AbstractObjectAssert<RateLimitDecisionsAssert, RateLimitDecisions> {

	/**
	 * Creates assertions on recorded decisions.
	 * @param actual the recorded decisions
	 */
	public RateLimitDecisionsAssert(RateLimitDecisions actual) {
		super(actual, RateLimitDecisionsAssert.class);
	}

	/**
	 * Verifies that the limit rejected the identity at least once.
	 * @param limit the limit name
	 * @param identity the identity, such as {@code user:alice} or {@code ip:127.0.0.1}
	 * @return this
	 */
	public RateLimitDecisionsAssert hasRejected(String limit, String identity) {
		return has((decision) -> decision.isFor(limit, identity) && decision.rejected(),
				"limit '%s' to have rejected %s", limit, identity);
	}

	/**
	 * Verifies that the limit never rejected the identity.
	 * @param limit the limit name
	 * @param identity the identity
	 * @return this
	 */
	public RateLimitDecisionsAssert hasNotRejected(String limit, String identity) {
		isNotNull();
		List<RecordedDecision> all = this.actual.all();
		if (all.stream().anyMatch((decision) -> decision.isFor(limit, identity) && decision.rejected())) {
			failWithMessage("Expected limit '%s' not to have rejected %s, but it did; recorded:%s", limit, identity,
					describe(all));
		}
		return this;
	}

	/**
	 * Verifies that the limit admitted the identity at least once.
	 * @param limit the limit name
	 * @param identity the identity
	 * @return this
	 */
	public RateLimitDecisionsAssert hasAllowed(String limit, String identity) {
		return has((decision) -> decision.isFor(limit, identity) && decision.allowed(),
				"limit '%s' to have allowed %s", limit, identity);
	}

	/**
	 * Verifies that no limit rejected anything (shadow limits included).
	 * @return this
	 */
	public RateLimitDecisionsAssert hasNoRejections() {
		isNotNull();
		List<RecordedDecision> all = this.actual.all();
		if (all.stream().anyMatch(RecordedDecision::rejected)) {
			failWithMessage("Expected no rejections, but recorded:%s", describe(all));
		}
		return this;
	}

	/**
	 * Continues with assertions on every recorded decision, oldest first.
	 * @return assertions on the list
	 */
	public ListAssert<RecordedDecision> decisions() {
		isNotNull();
		return Assertions.assertThat(this.actual.all());
	}

	/**
	 * Continues with assertions on the decisions of one limit, oldest first.
	 * @param limit the limit name
	 * @return assertions on the list
	 */
	public ListAssert<RecordedDecision> decisionsOf(String limit) {
		isNotNull();
		return Assertions.assertThat(this.actual.of(limit));
	}

	private RateLimitDecisionsAssert has(Predicate<RecordedDecision> match, String expectation, Object... arguments) {
		isNotNull();
		List<RecordedDecision> all = this.actual.all();
		if (all.stream().noneMatch(match)) {
			failWithMessage("Expected " + expectation + ", but recorded:%s",
					append(arguments, describe(all)));
		}
		return this;
	}

	private static Object[] append(Object[] arguments, Object last) {
		Object[] all = Arrays.copyOf(arguments, arguments.length + 1);
		all[arguments.length] = last;
		return all;
	}

	private static String describe(List<RecordedDecision> decisions) {
		if (decisions.isEmpty()) {
			return " nothing";
		}
		StringBuilder text = new StringBuilder();
		for (RecordedDecision decision : decisions) {
			text.append(System.lineSeparator()).append("  ").append(decision);
		}
		return text.toString();
	}

}

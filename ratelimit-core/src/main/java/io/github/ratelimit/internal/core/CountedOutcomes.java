package io.github.ratelimit.internal.core;

import java.util.BitSet;
import java.util.List;

/**
 * Which outcomes of a request count against a limit, as outcome codes from 0 to 999. A
 * request whose outcome is not counted is given back what it consumed once its outcome
 * is final. What the codes mean (final HTTP statuses) and how they are written
 * ({@code "401"}, {@code "4xx"}) belong to the layer that knows the outcomes, which builds
 * these already validated; the core only carries them and checks them against the
 * algorithm. {@link #ALL} counts every request, whatever its outcome.
 */
public final class CountedOutcomes {

	/** Largest outcome code, exclusive. */
	static final int MAX_CODE = 1000;

	/** Counts every outcome: nothing is given back. */
	public static final CountedOutcomes ALL = new CountedOutcomes(List.of(), null);

	/**
	 * Counts no outcome: everything is given back once the outcome is final, as a
	 * concurrency limit's permits are when the call completes.
	 */
	public static final CountedOutcomes NONE = new CountedOutcomes(List.of(), new BitSet(0));

	private final List<String> spelled;

	private final BitSet codes;

	private CountedOutcomes(List<String> spelled, BitSet codes) {
		this.spelled = spelled;
		this.codes = codes;
	}

	/**
	 * Outcomes that count: those with one of {@code codes}.
	 * @param codes the codes that count, each from 0 to 999; empty counts nothing
	 * @param spelled the outcomes as their user wrote them, for messages and equality
	 * @return the counted outcomes
	 * @throws IllegalArgumentException when a code is out of range
	 */
	public static CountedOutcomes of(BitSet codes, List<String> spelled) {
		if (codes.length() > MAX_CODE) {
			throw new IllegalArgumentException("outcome codes must be below " + MAX_CODE + ": " + (codes.length() - 1));
		}
		return new CountedOutcomes(List.copyOf(spelled), (BitSet) codes.clone());
	}

	/**
	 * Whether a request with an outcome counts against the limit.
	 * @param code the final outcome's code
	 * @return whether it counts; always for {@link #ALL}
	 */
	public boolean counts(int code) {
		return this.codes == null || (code >= 0 && this.codes.get(code));
	}

	/**
	 * Whether every outcome counts, so that nothing is ever given back.
	 * @return whether these are {@link #ALL}
	 */
	public boolean countsAll() {
		return this.codes == null;
	}

	/**
	 * The outcomes as written.
	 * @return the outcomes, empty for {@link #ALL} and {@link #NONE}
	 */
	public List<String> values() {
		return this.spelled;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof CountedOutcomes that && this.spelled.equals(that.spelled)
				&& (this.codes == null) == (that.codes == null) && (this.codes == null || this.codes.equals(that.codes));
	}

	@Override
	public int hashCode() {
		return this.spelled.hashCode();
	}

	@Override
	public String toString() {
		return countsAll() ? "all" : (this == NONE) ? "none" : String.join(",", this.spelled);
	}

}

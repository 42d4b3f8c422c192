package io.github.ratelimit;

/**
 * Invalid rate limit configuration, detected at startup. Names where the bad value comes
 * from (a property such as {@code ratelimit.policies.search.capacity} or an annotated
 * method) and how to fix it.
 */
public class RateLimitConfigurationException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String origin;

	private final String reason;

	private final String action;

	/**
	 * Creates an exception.
	 * @param origin the property or annotated method holding the bad value
	 * @param reason what is wrong
	 * @param action how to fix it
	 */
	public RateLimitConfigurationException(String origin, String reason, String action) {
		super(origin + ": " + reason + ". " + action);
		this.origin = origin;
		this.reason = reason;
		this.action = action;
	}

	/**
	 * The property or annotated method holding the bad value.
	 * @return the origin
	 */
	public String getOrigin() {
		return this.origin;
	}

	/**
	 * What is wrong.
	 * @return the reason
	 */
	public String getReason() {
		return this.reason;
	}

	/**
	 * How to fix it.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

}

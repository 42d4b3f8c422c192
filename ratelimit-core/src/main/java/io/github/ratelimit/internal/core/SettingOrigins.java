package io.github.ratelimit.internal.core;

import java.util.function.Function;

/**
 * Names the property a bad value came from: the policy if it set it, else the inline origin.
 *
 * @param name the limit name, which names its policy
 * @param policy the policy's settings, or {@code null} when none is configured
 * @param settings the settings written where the limit is applied
 * @param inlineWins whether those settings win over the policy's (a route's do)
 * @param inline where those settings come from
 */
record SettingOrigins(String name, LimitSettings policy, LimitSettings settings, boolean inlineWins,
		String inline) {

	String of(Function<LimitSettings, Object> value, String property) {
		if (fromPolicy(value)) {
			return LimitResolver.policyProperty(this.name) + "." + property;
		}
		return this.inline.startsWith("ratelimit.") ? this.inline + "." + property
				: this.inline + " (" + property + ")";
	}

	/** The property that set a value, {@code annotation}, or {@code default} when nothing did. */
	String source(Function<LimitSettings, Object> value, String property) {
		if (fromPolicy(value)) {
			return LimitResolver.policyProperty(this.name) + "." + property;
		}
		if (value.apply(this.settings) == null) {
			return ResolvedLimit.DEFAULT;
		}
		return this.inline.startsWith("ratelimit.") ? this.inline + "." + property : ResolvedLimit.ANNOTATION;
	}

	private boolean fromPolicy(Function<LimitSettings, Object> value) {
		return this.policy != null && value.apply(this.policy) != null
				&& !(this.inlineWins && value.apply(this.settings) != null);
	}

}

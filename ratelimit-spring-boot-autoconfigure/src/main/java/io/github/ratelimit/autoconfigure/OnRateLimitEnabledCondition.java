package io.github.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches unless {@code ratelimit.enabled} is false. The value is bound as a boolean, like
 * every other property, so a typo such as {@code ture} fails the startup instead of
 * silently switching rate limiting off (which a plain property condition would do: it
 * matches only the exact text {@code true}).
 */
class OnRateLimitEnabledCondition extends SpringBootCondition {

	private static final String PROPERTY = "ratelimit.enabled";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		ConditionMessage.Builder message = ConditionMessage.forCondition(PROPERTY);
		boolean enabled = Binder.get(context.getEnvironment()).bind(PROPERTY, Boolean.class).orElse(true);
		return enabled ? ConditionOutcome.match(message.because("is not false"))
				: ConditionOutcome.noMatch(message.because("is false"));
	}

}

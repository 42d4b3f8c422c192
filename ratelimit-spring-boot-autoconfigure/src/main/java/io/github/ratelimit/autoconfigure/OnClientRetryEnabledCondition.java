package io.github.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code ratelimit.client.retry.enabled} is true. Bound as a boolean, so that
 * a misspelt value fails the startup instead of leaving retries silently off, which
 * {@code @ConditionalOnBooleanProperty} would do.
 */
class OnClientRetryEnabledCondition extends SpringBootCondition {

	private static final String PROPERTY = "ratelimit.client.retry.enabled";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		ConditionMessage.Builder message = ConditionMessage.forCondition(PROPERTY);
		boolean enabled = Binder.get(context.getEnvironment()).bind(PROPERTY, Boolean.class).orElse(false);
		return enabled ? ConditionOutcome.match(message.because("is true"))
				: ConditionOutcome.noMatch(message.because("is not true"));
	}

}

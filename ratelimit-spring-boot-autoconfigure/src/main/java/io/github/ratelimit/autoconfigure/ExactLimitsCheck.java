package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;

import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.ResolvedLimit;

/**
 * Warns, once the application has started and every limit has been resolved, about names
 * in {@code ratelimit.redis.exact-limits} that no limit has: a misspelt name would
 * otherwise leave that limit decided local-first without a word.
 */
final class ExactLimitsCheck implements ApplicationListener<ContextRefreshedEvent> {

	private final List<String> exactLimits;

	private final LimitResolver resolver;

	private final Consumer<String> warn;

	private final AtomicBoolean checked = new AtomicBoolean();

	ExactLimitsCheck(List<String> exactLimits, LimitResolver resolver, Consumer<String> warn) {
		this.exactLimits = List.copyOf(exactLimits);
		this.resolver = resolver;
		this.warn = warn;
	}

	@Override
	public void onApplicationEvent(ContextRefreshedEvent event) {
		if (this.exactLimits.isEmpty() || !this.checked.compareAndSet(false, true)) {
			return;
		}
		Set<String> known = new TreeSet<>(this.resolver.policyNames());
		for (ResolvedLimit resolved : this.resolver.resolvedLimits()) {
			known.add(resolved.name());
		}
		Set<String> unknown = new TreeSet<>(this.exactLimits);
		unknown.removeAll(known);
		if (!unknown.isEmpty()) {
			this.warn.accept("ratelimit.redis.exact-limits names limits this application does not have: " + unknown
					+ "; they are decided local-first like every other limit. Its limits: " + known
					+ " (the ratelimits actuator endpoint lists them too)");
		}
	}

}

package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

/**
 * The store choices, imported in order: Redis first, then the PostgreSQL store of
 * {@link RateLimitJdbcStoreConfiguration}, memory as the fallback.
 */
final class RateLimitStoreConfigurations {

	private RateLimitStoreConfigurations() {
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.data.redis.connection.RedisConnectionFactory")
	@ConditionalOnBean(type = "org.springframework.data.redis.connection.RedisConnectionFactory")
	@ConditionalOnExpression("'${ratelimit.store:auto}'.toLowerCase() matches 'auto|redis'")
	@ConditionalOnMissingBean(RateLimitStore.class)
	static class Redis implements DisposableBean {

		private static final Log logger = LogFactory.getLog(FailoverRateLimitStore.class);

		/**
		 * The Redis store, closed with the context after the store bean that wraps it (a
		 * local-first store does not close the store it leases from).
		 */
		private volatile RedisRateLimitStore redisStore;

		@Bean
		RateLimitStore rateLimitStore(RedisConnectionFactory redisConnectionFactory,
				RateLimitProperties properties, RateLimitClock rateLimitClock,
				ObjectProvider<RateLimitObserver> observers) {
			// before the constructors below reject a value without naming its property
			RateLimitPropertiesMapper.validateGeneral(properties);
			RateLimitProperties.Redis redis = properties.getRedis();
			// Redis decides at its own TIME unless the application (a test) brought its own clock
			RateLimitClock redisClock = RateLimitClock.isSystem(rateLimitClock) ? null : rateLimitClock;
			RedisRateLimitStore primary = RedisRateLimitStore.builder(redisConnectionFactory)
				.keyPrefix(redis.getKeyPrefix())
				.clock(redisClock)
				.timeout(redis.getTimeout())
				.layout(redis.getKeyLayout())
				.functions(redis.isFunctions())
				.build();
			this.redisStore = primary;
			// in the background: a hung Redis must not hold up the application's startup
			Thread preload = new Thread(() -> {
				try {
					primary.preload();
				}
				catch (RuntimeException ex) {
					logger.warn("Rate limit script could not be loaded into Redis at startup (" + ex.getMessage()
							+ "); the fallback decides until Redis answers");
				}
			}, "ratelimit-redis-preload");
			preload.setDaemon(true);
			preload.start();
			InMemoryRateLimitStore fallback = new InMemoryRateLimitStore(rateLimitClock,
					properties.getMemory().getMaximumKeys());
			RateLimitStores.Builder chain = RateLimitStores.builder(primary)
				.clock(rateLimitClock::nowMicros)
				.fallback(fallback, properties.getFallbackFactor())
				.circuitBreaker(redis.getFailureThreshold(), redis.getProbeInterval())
				.log(logger::warn, logger::info);
			if (redis.getMode() == RateLimitProperties.Redis.Mode.LOCAL_FIRST) {
				chain.localFirst(redis.getSyncInterval(), Set.copyOf(redis.getExactLimits()),
						(int) Math.min(Integer.MAX_VALUE, properties.getMemory().getMaximumKeys()));
			}
			RateLimitObserver observer = RateLimitObservers.of(observers);
			if (observer != RateLimitObserver.NONE) {
				chain.observed(observer::storeFailed);
			}
			return chain.build();
		}

		/**
		 * In place of Spring Boot's {@code redis} health indicator, which waits for Redis up
		 * to the connection's command timeout (60 seconds by default) and then goes
		 * {@code DOWN}: one that waits at most the store's timeout and stays {@code UP}
		 * while the fallback decides, unless the application's Redis serves more than rate
		 * limits ({@code ratelimit.redis.rate-limits-only=false}).
		 */
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(name = { "org.springframework.boot.health.contributor.HealthIndicator",
				"org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator" })
		@ConditionalOnEnabledHealthIndicator("redis")
		@ConditionalOnBooleanProperty(name = "ratelimit.redis.rate-limits-only", matchIfMissing = true)
		static class RedisHealth {

			@Bean
			@ConditionalOnMissingBean(name = { "redisHealthIndicator", "redisHealthContributor" })
			RateLimitRedisHealthIndicator redisHealthIndicator(RedisConnectionFactory redisConnectionFactory,
					RateLimitProperties properties, ObjectProvider<RateLimitStore> rateLimitStore) {
				return new RateLimitRedisHealthIndicator(redisConnectionFactory, rateLimitStore::getIfAvailable,
						properties.getRedis().getTimeout());
			}

		}

		@Override
		public void destroy() {
			RedisRateLimitStore store = this.redisStore;
			if (store != null) {
				store.close();
			}
		}

		@Bean
		ExactLimitsCheck rateLimitExactLimitsCheck(RateLimitProperties properties, LimitResolver rateLimitResolver) {
			List<String> exact = (properties.getRedis().getMode() == RateLimitProperties.Redis.Mode.LOCAL_FIRST)
					? properties.getRedis().getExactLimits() : List.of();
			return new ExactLimitsCheck(exact, rateLimitResolver, logger::warn);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingBean(RateLimitStore.class)
	static class InMemory {

		@Bean
		InMemoryRateLimitStore rateLimitStore(RateLimitProperties properties, RateLimitClock rateLimitClock) {
			if (properties.getStore() == RateLimitProperties.StoreType.REDIS) {
				throw new RateLimitConfigurationException("ratelimit.store",
						"redis is selected but the application has no RedisConnectionFactory bean",
						"Add spring-boot-starter-data-redis and configure spring.data.redis.*, or use ratelimit.store=memory");
			}
			if (properties.getStore() == RateLimitProperties.StoreType.JDBC) {
				throw new RateLimitConfigurationException("ratelimit.store",
						"jdbc is selected but the application has no DataSource bean, or spring-jdbc is missing",
						"Add spring-boot-starter-jdbc and the PostgreSQL driver, and configure spring.datasource.*, "
								+ "or use ratelimit.store=memory");
			}
			RateLimitPropertiesMapper.validateGeneral(properties);
			return new InMemoryRateLimitStore(rateLimitClock, properties.getMemory().getMaximumKeys());
		}

	}

}

package io.github.ratelimit.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Prepares a test's application context for testing rate limits: the starter's
 * auto-configuration (which test slices such as {@code @WebMvcTest} and
 * {@code @WebFluxTest} leave out otherwise), a {@link TestRateLimitClock} as the
 * application's clock unless it declares a {@code RateLimitClock} bean of its own, and a
 * {@link RateLimitDecisions} recorder. Before every test method every bucket is forgotten,
 * the clock returns to its start and the recorded decisions are cleared, so tests do not
 * depend on the order they run in.
 * <p>
 * The limits are decided by the in-memory store unless the test asks for the
 * application's own ({@link #store()}), so that a test of an application configured for
 * Redis needs no running Redis.
 * <pre class="code">
 * &#64;WebMvcTest(OrderController.class)
 * &#64;AutoConfigureRateLimitTest
 * class OrderControllerTests {
 *
 *     &#64;Autowired MockMvcTester mvc;
 *     &#64;Autowired TestRateLimitClock clock;
 *     &#64;Autowired RateLimitDecisions decisions;
 *     ...
 * }
 * </pre>
 *
 * @see TestRateLimitClock
 * @see RateLimitDecisions
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureRateLimitTest {

	/**
	 * Which store decides the test's limits.
	 * @return {@link Store#MEMORY} (the default) or {@link Store#APPLICATION}
	 */
	Store store() default Store.MEMORY;

	/**
	 * Which store decides a test's limits.
	 */
	enum Store {

		/**
		 * The in-memory store, whatever the application configures ({@code ratelimit.store=memory}
		 * for the test, which the test's own properties may override): the test needs no
		 * Redis. A {@code RateLimitStore} bean of the application's own is kept.
		 */
		MEMORY,

		/**
		 * The store the application configures: Redis when it has a
		 * {@code RedisConnectionFactory}. The Redis must run, and the buckets under
		 * {@code ratelimit.redis.key-prefix} are deleted before every test method.
		 */
		APPLICATION

	}

}

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

}

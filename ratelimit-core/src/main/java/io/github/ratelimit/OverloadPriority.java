package io.github.ratelimit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The priority of the requests a handler serves when the service is overloaded
 * ({@code ratelimit.overload.enabled=true}). On a controller method, or on the controller
 * class for all its methods (the method wins). A route listed under
 * {@code ratelimit.overload.priorities}, a configured priority header or a
 * {@link RequestPriorityResolver} bean take precedence, so operators can change a
 * priority without a rebuild.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface OverloadPriority {

	/**
	 * The priority of the handler's requests.
	 * @return the priority
	 */
	RequestPriority value();

}

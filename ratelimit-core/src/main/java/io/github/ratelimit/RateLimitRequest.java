package io.github.ratelimit;

import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * An HTTP request as the limiter sees it, whatever web stack carries it (servlet or
 * WebFlux). Key resolvers and the request pipeline read requests only through this view.
 */
public interface RateLimitRequest {

	/**
	 * The request method, such as {@code GET}.
	 * @return the method
	 */
	String method();

	/**
	 * The path within the application, decoded, without path parameters ({@code ;x=y}),
	 * not yet normalised.
	 * @return the path
	 */
	String path();

	/**
	 * Every value of a header, one element per header line, in the order received.
	 * @param name the header name, matched ignoring case
	 * @return the values, empty when the header is absent
	 */
	List<String> headers(String name);

	/**
	 * The first value of a header.
	 * @param name the header name, matched ignoring case
	 * @return the value, or {@code null} when the header is absent
	 */
	default @Nullable String header(String name) {
		List<String> values = headers(name);
		return values.isEmpty() ? null : values.get(0);
	}

	/**
	 * The address of the peer that sent the request: the client, or the last proxy.
	 * @return the address literal as the server reports it, or {@code null}
	 */
	@Nullable String remoteAddress();

	/**
	 * The authenticated principal: with Spring Security its {@code Authentication}.
	 * Anonymous users have none.
	 * @return the principal, or {@code null} when nobody is authenticated
	 */
	@Nullable Principal principal();

	/**
	 * The request object of the web stack ({@code HttpServletRequest} or
	 * {@code ServerHttpRequest}), for key resolvers that need more than this view.
	 * @return the native request
	 */
	Object nativeRequest();

}

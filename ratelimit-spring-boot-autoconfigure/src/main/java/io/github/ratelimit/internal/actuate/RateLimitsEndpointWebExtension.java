package io.github.ratelimit.internal.actuate;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code ratelimits} endpoint over HTTP: answers a request it cannot serve (an unknown
 * limit name, a missing identity) with {@code 400} and the reason as the body, rather than
 * an exception, so that an application's catch-all exception handler cannot turn it into
 * a {@code 500}.
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

	private final RateLimitsEndpoint endpoint;

	/**
	 * Creates the extension.
	 * @param endpoint the endpoint it serves over HTTP
	 */
	public RateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Lists every limit, or shows one identity's buckets of a limit.
	 * @param name the limit name, or {@code null} to list every limit
	 * @param identity the identity, or {@code null} to list every limit
	 * @return the limits or the buckets, or {@code 400} with the reason
	 * @see RateLimitsEndpoint#read(String, String)
	 */
	@ReadOperation
	public WebEndpointResponse<OperationResponseBody> read(@Nullable String name, @Nullable String identity) {
		return answer(() -> this.endpoint.read(name, identity));
	}

	/**
	 * Resets one identity's buckets of a limit.
	 * @param name the limit name
	 * @param identity the identity
	 * @return what was reset, or {@code 400} with the reason
	 * @see RateLimitsEndpoint#reset(String, String)
	 */
	@DeleteOperation
	public WebEndpointResponse<OperationResponseBody> reset(@Nullable String name, @Nullable String identity) {
		if (name == null || identity == null) {
			return badRequest("Give both 'name' and 'identity' to reset a bucket");
		}
		return answer(() -> this.endpoint.reset(name, identity));
	}

	private static WebEndpointResponse<OperationResponseBody> answer(Supplier<OperationResponseBody> operation) {
		try {
			return new WebEndpointResponse<>(operation.get());
		}
		catch (InvalidEndpointRequestException ex) {
			return badRequest(ex.getReason());
		}
	}

	private static WebEndpointResponse<OperationResponseBody> badRequest(String reason) {
		return new WebEndpointResponse<>(new Rejection(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", reason),
				WebEndpointResponse.STATUS_BAD_REQUEST);
	}

	/**
	 * Why a request was not served.
	 *
	 * @param status the HTTP status
	 * @param error the status's reason phrase
	 * @param message what was wrong and how to ask instead
	 */
	public record Rejection(int status, String error, String message) implements OperationResponseBody {
	}

}

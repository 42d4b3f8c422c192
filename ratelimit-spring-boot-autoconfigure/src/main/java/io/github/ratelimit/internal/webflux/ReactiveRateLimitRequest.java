package io.github.ratelimit.internal.webflux;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;

import io.github.ratelimit.RateLimitRequest;

/**
 * A reactive request as the request pipeline sees it. The principal is resolved by the
 * caller (from the exchange, after Spring Security), since reading it is asynchronous.
 */
public final class ReactiveRateLimitRequest implements RateLimitRequest {

	private final ServerHttpRequest request;

	private final Principal principal;

	private String path;

	/**
	 * Adapts a request.
	 * @param request the reactive request
	 * @param principal the authenticated principal, or {@code null}
	 */
	public ReactiveRateLimitRequest(ServerHttpRequest request, Principal principal) {
		this.request = request;
		this.principal = principal;
	}

	@Override
	public String method() {
		return this.request.getMethod().name();
	}

	/**
	 * Decoded segment by segment and without path parameters, as WebFlux matches handlers;
	 * a path with nothing to decode and no parameters ({@code %} and {@code ;} absent) is
	 * that already.
	 */
	@Override
	public String path() {
		if (this.path == null) {
			PathContainer within = this.request.getPath().pathWithinApplication();
			String raw = within.value();
			if (raw.indexOf('%') < 0 && raw.indexOf(';') < 0) {
				this.path = raw;
				return raw;
			}
			StringBuilder path = new StringBuilder();
			for (PathContainer.Element element : within.elements()) {
				if (element instanceof PathContainer.PathSegment segment) {
					path.append(segment.valueToMatch());
				}
				else {
					path.append(element.value());
				}
			}
			this.path = path.toString();
		}
		return this.path;
	}

	@Override
	public List<String> headers(String name) {
		List<String> values = this.request.getHeaders().get(name);
		return (values != null) ? values : List.of();
	}

	@Override
	public String header(String name) {
		return this.request.getHeaders().getFirst(name);
	}

	/** The peer's address literal; never a DNS lookup. */
	@Override
	public String remoteAddress() {
		InetSocketAddress remote = this.request.getRemoteAddress();
		if (remote == null) {
			return null;
		}
		InetAddress address = remote.getAddress();
		return (address != null) ? address.getHostAddress() : remote.getHostString();
	}

	@Override
	public Principal principal() {
		return this.principal;
	}

	@Override
	public Object nativeRequest() {
		return this.request;
	}

}

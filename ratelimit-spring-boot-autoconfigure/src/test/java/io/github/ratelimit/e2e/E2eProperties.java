package io.github.ratelimit.e2e;

/**
 * Configuration of the end-to-end application, shared so that test classes reuse one
 * context.
 */
final class E2eProperties {

	static final String[] ROUTES = { "ratelimit.policies.tuned.capacity=3",
			"ratelimit.routes[0].path=/routed/**", "ratelimit.routes[0].methods=GET",
			"ratelimit.routes[0].capacity=4", "ratelimit.routes[0].period=1h", "ratelimit.routes[0].key=ip",
			"ratelimit.routes[1].path=/login", "ratelimit.routes[1].methods=POST", "ratelimit.routes[1].capacity=3",
			"ratelimit.routes[1].period=1h", "ratelimit.routes[1].key=ip",
			"ratelimit.routes[2].path=/private/guarded", "ratelimit.routes[2].capacity=3",
			"ratelimit.routes[2].period=1h", "ratelimit.routes[2].key=ip",
			"ratelimit.routes[3].path=/private/routed", "ratelimit.routes[3].capacity=2",
			"ratelimit.routes[3].period=1h", "ratelimit.routes[3].key=principal",
			"ratelimit.routes[4].path=/private/both", "ratelimit.routes[4].capacity=5",
			"ratelimit.routes[4].period=1000h", "ratelimit.routes[4].key=principal",
			"ratelimit.routes[5].path=/refund/*", "ratelimit.routes[5].policy=refund-route",
			"ratelimit.policies.refund-route.capacity=5", "ratelimit.policies.refund-route.period=1000h",
			"ratelimit.policies.refund-route.key=ip" };

	private E2eProperties() {
	}

}

package io.github.ratelimit.sample;

import java.math.BigDecimal;
import java.net.URI;
import java.security.Principal;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.RequestPriority;

/**
 * Orders: an unnamed limit on reads and a named policy, tuned in {@code application.yml},
 * on writes.
 */
@RestController
@RequestMapping("/api/orders")
public class OrderController {

	private final OrderRepository orders;

	OrderController(OrderRepository orders) {
		this.orders = orders;
	}

	/**
	 * Reads an order. The limit has no name, so it is named after the route
	 * ({@code GET /api/orders/{id}}): every order id draws from one bucket per caller, the
	 * authenticated user or else the client IP.
	 * @param id the order id
	 * @return the order, or 404
	 */
	@RateLimited(capacity = 5, period = "1m")
	@GetMapping("/{id}")
	public ResponseEntity<Order> order(@PathVariable long id) {
		return ResponseEntity.of(this.orders.findById(id));
	}

	/**
	 * Places an order. The {@code orders-write} policy in {@code application.yml} sets the
	 * whole limit, keyed on the authenticated user. Placing an order is what the shop lives
	 * on: when the service is overloaded it keeps the reserved share of the limit on calls
	 * in flight ({@code ratelimit.overload}), and is turned away last.
	 * @param request the order to place
	 * @param principal the authenticated user
	 * @return the stored order
	 */
	@RateLimited("orders-write")
	@OverloadPriority(RequestPriority.CRITICAL)
	@PostMapping
	public ResponseEntity<Order> place(@RequestBody NewOrder request, Principal principal) {
		if (request.item() == null || request.item().isBlank() || request.quantity() < 1) {
			return ResponseEntity.badRequest().build();
		}
		BigDecimal total = new BigDecimal("9.99").multiply(BigDecimal.valueOf(request.quantity()));
		Order order = this.orders.save(principal.getName(), request.item(), request.quantity(), total);
		return ResponseEntity.created(URI.create("/api/orders/" + order.id())).body(order);
	}

	/**
	 * An order to place.
	 *
	 * @param item what to order
	 * @param quantity how many
	 */
	public record NewOrder(String item, int quantity) {

	}

}

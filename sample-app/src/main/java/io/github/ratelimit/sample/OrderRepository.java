package io.github.ratelimit.sample;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.stereotype.Repository;

/**
 * Orders kept in memory, seeded with a few demo orders (ids 1 to 3).
 */
@Repository
public class OrderRepository {

	/** Largest number of orders kept, so that the demo cannot be made to run out of memory. */
	private static final int MAX_ORDERS = 10_000;

	private final Map<Long, Order> orders = new ConcurrentHashMap<>();

	private final AtomicLong ids = new AtomicLong();

	/**
	 * Creates the repository with its demo orders.
	 */
	public OrderRepository() {
		save("alice", "Mechanical keyboard", 1, new BigDecimal("89.90"));
		save("alice", "USB-C cable", 3, new BigDecimal("17.85"));
		save("bob", "Laptop stand", 1, new BigDecimal("39.00"));
	}

	/**
	 * Stores a new order.
	 * @param owner the user placing it
	 * @param item what is ordered
	 * @param quantity how many
	 * @param total the price
	 * @return the stored order
	 */
	public Order save(String owner, String item, int quantity, BigDecimal total) {
		if (this.orders.size() >= MAX_ORDERS) {
			throw new IllegalStateException("The demo keeps at most " + MAX_ORDERS + " orders");
		}
		Order order = new Order(this.ids.incrementAndGet(), owner, item, quantity, total, Instant.now());
		this.orders.put(order.id(), order);
		return order;
	}

	/**
	 * Finds an order.
	 * @param id the order id
	 * @return the order, if it exists
	 */
	public Optional<Order> findById(long id) {
		return Optional.ofNullable(this.orders.get(id));
	}

}

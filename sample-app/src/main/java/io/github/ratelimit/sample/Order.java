package io.github.ratelimit.sample;

import java.math.BigDecimal;
import java.time.Instant;

/**
 * An order of the sample shop.
 *
 * @param id the order id
 * @param owner the user who placed it
 * @param item what was ordered
 * @param quantity how many
 * @param total the price
 * @param createdAt when it was placed
 */
public record Order(long id, String owner, String item, int quantity, BigDecimal total, Instant createdAt) {

}

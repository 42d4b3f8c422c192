package io.github.ratelimit.sample;

import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RequestPriority;

/**
 * Searches the product catalog. No annotation here: the {@code /api/search/**} entry
 * under {@code ratelimit.routes} in {@code application.yml} limits it, in a servlet filter
 * that runs before Spring Security. When the service is overloaded, searches are the
 * first requests turned away ({@code 503}): a client can retry a search, and the calls in
 * flight they free go to orders.
 */
@RestController
@OverloadPriority(RequestPriority.SHEDDABLE)
public class SearchController {

	private static final List<Product> CATALOG = List.of(
			new Product("KB-01", "Mechanical keyboard", new BigDecimal("89.90")),
			new Product("CB-03", "USB-C cable", new BigDecimal("5.95")),
			new Product("LS-02", "Laptop stand", new BigDecimal("39.00")),
			new Product("MS-07", "Wireless mouse", new BigDecimal("24.50")),
			new Product("MN-27", "27\" monitor", new BigDecimal("249.00")));

	/**
	 * Products whose name contains a text, ignoring case.
	 * @param q the text to look for; empty matches everything
	 * @return the matching products
	 */
	@GetMapping({ "/api/search", "/api/search/products" })
	public List<Product> search(@RequestParam(defaultValue = "") String q) {
		String needle = q.toLowerCase(Locale.ROOT);
		return CATALOG.stream().filter((product) -> product.name().toLowerCase(Locale.ROOT).contains(needle)).toList();
	}

	/**
	 * A product of the catalog.
	 *
	 * @param sku the stock keeping unit
	 * @param name the product name
	 * @param price the unit price
	 */
	public record Product(String sku, String name, BigDecimal price) {

	}

}

package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.StreamSupport;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterInfo;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.internal.redis.RedisTestCluster.HostAndPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link RedisTestCluster}.
 */
class RedisTestClusterTests {

	@Test
	void hasThreeMastersCoveringEverySlot() {
		RedisTestCluster cluster = RedisTestCluster.shared();
		assertThat(cluster.masters()).hasSize(3);
		LettuceConnectionFactory factory = cluster.connectionFactory();
		try (RedisClusterConnection connection = factory.getClusterConnection()) {
			ClusterInfo info = connection.clusterGetClusterInfo();
			assertThat(info.getState()).isEqualTo("ok");
			assertThat(info.getSlotsAssigned()).isEqualTo(RedisTestCluster.SLOTS);
			assertThat(info.getSlotsOk()).isEqualTo(RedisTestCluster.SLOTS);
			List<Integer> masterPorts = StreamSupport.stream(connection.clusterGetNodes().spliterator(), false)
				.filter(RedisClusterNode::isMaster)
				.map(RedisClusterNode::getPort)
				.toList();
			assertThat(masterPorts).containsExactlyInAnyOrderElementsOf(ports(cluster.masters()));
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void routesHashTaggedKeysInDifferentSlotsToTheirMasters() {
		RedisTestCluster cluster = RedisTestCluster.shared();
		assertThat(SlotHash.getSlot("{a}x")).isNotEqualTo(SlotHash.getSlot("{b}y"));
		LettuceConnectionFactory factory = cluster.connectionFactory();
		try (RedisClusterConnection connection = factory.getClusterConnection()) {
			assertThat(connection.clusterGetNodeForKey(bytes("{a}x")).getPort())
				.isNotEqualTo(connection.clusterGetNodeForKey(bytes("{b}y")).getPort());
			StringRedisTemplate redis = template(factory);
			redis.opsForValue().set("{a}x", "ax");
			redis.opsForValue().set("{b}y", "by");
			assertThat(redis.opsForValue().get("{a}x")).isEqualTo("ax");
			assertThat(redis.opsForValue().get("{b}y")).isEqualTo("by");
			cluster.flushAll();
			assertThat(redis.hasKey("{a}x")).isFalse();
			assertThat(redis.hasKey("{b}y")).isFalse();
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void registersTheSharedClusterNodesForSpringBoot() {
		Map<String, Supplier<Object>> properties = new HashMap<>();
		RedisTestCluster.properties(properties::put);
		assertThat(properties.get("spring.data.redis.cluster.nodes").get().toString().split(","))
			.containsExactlyElementsOf(RedisTestCluster.shared().nodes().stream().map(HostAndPort::toString).toList());
	}

	@Test
	void refusesToKillANodeOfTheSharedCluster() {
		assertThatIllegalStateException().isThrownBy(() -> RedisTestCluster.shared().killMaster(0))
			.withMessageContaining("RedisTestCluster.start(");
		assertThat(RedisTestCluster.shared().masters()).hasSize(3);
	}

	@Test
	void promotesAReplicaWhenAMasterIsKilledAndTakesTheOldMasterBackAsAReplica() {
		try (RedisTestCluster cluster = RedisTestCluster.start(3, 1)) {
			assertThat(cluster.nodes()).hasSize(6);
			LettuceConnectionFactory factory = cluster.connectionFactory();
			StringRedisTemplate redis = template(factory);
			int ownerPort;
			try (RedisClusterConnection connection = factory.getClusterConnection()) {
				ownerPort = connection.clusterGetNodeForKey(bytes("{a}x")).getPort();
			}
			int index = ports(cluster.masters()).indexOf(ownerPort);
			assertThat(index).isNotNegative();

			HostAndPort killed = cluster.killMaster(index);
			assertThat(killed.port()).isEqualTo(ownerPort);
			assertThat(cluster.masters()).hasSize(2).doesNotContain(killed);
			cluster.awaitHealthy();
			assertThat(cluster.masters()).hasSize(3).doesNotContain(killed);
			await().atMost(Duration.ofSeconds(15))
				.pollInterval(Duration.ofMillis(100))
				.ignoreExceptions()
				.untilAsserted(() -> {
					redis.opsForValue().set("{a}x", "after failover");
					assertThat(redis.opsForValue().get("{a}x")).isEqualTo("after failover");
				});

			cluster.restartNode(killed);
			cluster.awaitHealthy();
			assertThat(cluster.masters()).hasSize(3).doesNotContain(killed);
		}
	}

	private static List<Integer> ports(List<HostAndPort> nodes) {
		return nodes.stream().map(HostAndPort::port).toList();
	}

	private static byte[] bytes(String key) {
		return key.getBytes(StandardCharsets.UTF_8);
	}

	private static StringRedisTemplate template(LettuceConnectionFactory factory) {
		StringRedisTemplate template = new StringRedisTemplate(factory);
		template.afterPropertiesSet();
		return template;
	}

}

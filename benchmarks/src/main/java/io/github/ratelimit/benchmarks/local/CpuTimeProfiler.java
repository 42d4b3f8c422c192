package io.github.ratelimit.benchmarks.local;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * Reports the CPU time the benchmark JVM spent per operation ({@code cpu.ns/op}): the
 * growth of the process CPU time over an iteration divided by the operations of all
 * threads. On a machine shared with other work, the time per operation also counts the
 * time the benchmark threads waited for a core; the CPU time does not, so it compares
 * libraries measured minutes apart more fairly. It includes the garbage collector's work.
 * Use with {@code -prof io.github.ratelimit.benchmarks.local.CpuTimeProfiler}.
 */
public class CpuTimeProfiler implements InternalProfiler {

	private final com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
		.getOperatingSystemMXBean();

	private long startCpuNanos;

	@Override
	public String getDescription() {
		return "process CPU time per operation";
	}

	@Override
	public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
		this.startCpuNanos = this.os.getProcessCpuTime();
	}

	@Override
	public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
			IterationParams iterationParams, IterationResult result) {
		long cpuNanos = this.os.getProcessCpuTime() - this.startCpuNanos;
		long ops = result.getMetadata().getAllOps();
		if (ops == 0) {
			return List.of();
		}
		return List.of(new ScalarResult("cpu.ns/op", (double) cpuNanos / ops, "ns/op", AggregationPolicy.AVG));
	}

}

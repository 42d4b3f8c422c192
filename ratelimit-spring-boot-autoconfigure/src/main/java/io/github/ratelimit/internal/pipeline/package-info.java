/**
 * Internal: the request pipeline, free of servlet and reactive types: route matching,
 * identity binding, stage decisions, verdicts (headers and problem bodies) and settlement of
 * outcomes. Not API: any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.pipeline;

import org.jspecify.annotations.NullMarked;

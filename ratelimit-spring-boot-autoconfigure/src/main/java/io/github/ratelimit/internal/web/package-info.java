/**
 * Internal: the servlet adapter from servlet requests to the request pipeline. Not API:
 * any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.web;

import org.jspecify.annotations.NullMarked;

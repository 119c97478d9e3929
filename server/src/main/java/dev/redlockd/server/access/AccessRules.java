package dev.redlockd.server.access;

/**
 * The policy and the bearer tokens in force together: a reload swaps both at once, so no call is
 * judged by a new token file and an old policy.
 */
public record AccessRules(Policy policy, TokenFile tokens) {}

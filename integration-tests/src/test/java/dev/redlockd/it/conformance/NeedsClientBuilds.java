package dev.redlockd.it.conformance;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A test class that runs other languages' clients ({@link ClientBuilds}): when a test run
 * includes one, the builds start as the run begins ({@link ClientBuildsAtStart}).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@interface NeedsClientBuilds {}

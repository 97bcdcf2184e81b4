package dev.licensing.client;

import java.util.Objects;

/** The assertions the tests use. */
final class Check {
    private Check() {}

    /** A test's failed expectation. */
    static final class Failure extends AssertionError {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    interface Action {
        void run() throws Exception;
    }

    static void equal(Object expected, Object actual) {
        equal(expected, actual, "");
    }

    static void equal(Object expected, Object actual, String what) {
        if (!Objects.equals(expected, actual))
            throw new Failure((what.isEmpty() ? "" : what + ": ") + "expected <" + expected + "> but got <" + actual + ">");
    }

    static void isTrue(boolean condition, String what) {
        if (!condition) throw new Failure("expected true: " + what);
    }

    static void isFalse(boolean condition, String what) {
        if (condition) throw new Failure("expected false: " + what);
    }

    /** Runs the action and answers what it threw, which must be of the given type. */
    static <T extends Throwable> T fails(Class<T> type, Action action) {
        try {
            action.run();
        } catch (Throwable t) {
            if (type.isInstance(t)) return type.cast(t);
            throw new Failure("expected " + type.getSimpleName() + " but got " + t);
        }
        throw new Failure("expected " + type.getSimpleName() + " but nothing was thrown");
    }
}

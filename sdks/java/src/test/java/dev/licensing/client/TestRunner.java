package dev.licensing.client;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A test runner of our own (no JUnit: the library needs nothing but the JDK, and neither do its
 * tests). Every public no-argument method whose name starts with {@code test} in the classes below
 * runs on a fresh instance; a method passes when it returns and fails when it throws. Prints one line
 * per test and a summary; exits 1 when any failed.
 *
 * <p>{@code java -cp .build/test-classes dev.licensing.client.TestRunner [FILTER]}: FILTER (a part of
 * "Class.method") runs only the tests whose name contains it.
 */
public final class TestRunner {
    /** The test classes, in the order they run. */
    static final List<Class<?>> CLASSES = List.of(
            JsonTest.class,
            LicenseKeysTest.class,
            LicenseFilesTest.class,
            WebhooksTest.class,
            VectorsTest.class,
            LicensedAppTest.class,
            ConformanceTest.class);

    public static void main(String[] args) {
        String filter = args.length > 0 ? args[0] : "";
        int passed = 0;
        List<String> failed = new ArrayList<>();
        long started = System.nanoTime();
        for (Class<?> type : CLASSES) {
            List<Method> methods = new ArrayList<>(Arrays.asList(type.getDeclaredMethods()));
            methods.sort(Comparator.comparing(Method::getName));
            for (Method m : methods) {
                if (!m.getName().startsWith("test") || m.getParameterCount() != 0 || !Modifier.isPublic(m.getModifiers())) continue;
                String name = type.getSimpleName() + "." + m.getName();
                if (!name.contains(filter)) continue;
                long t0 = System.nanoTime();
                Throwable failure = null;
                try {
                    Object instance = Modifier.isStatic(m.getModifiers()) ? null : type.getDeclaredConstructor().newInstance();
                    m.invoke(instance);
                } catch (InvocationTargetException e) {
                    failure = e.getCause();
                } catch (ReflectiveOperationException e) {
                    failure = e;
                }
                long ms = (System.nanoTime() - t0) / 1_000_000;
                if (failure == null) {
                    passed++;
                    System.out.printf("ok    %s (%d ms)%n", name, ms);
                } else {
                    failed.add(name);
                    System.out.printf("FAIL  %s (%d ms)%n      %s%n", name, ms, failure);
                    StackTraceElement[] trace = failure.getStackTrace();
                    for (int i = 0; i < Math.min(6, trace.length); i++) System.out.println("        at " + trace[i]);
                }
            }
        }
        long total = (System.nanoTime() - started) / 1_000_000;
        System.out.printf("%n%d passed, %d failed (%d ms)%n", passed, failed.size(), total);
        for (String name : failed) System.out.println("  failed: " + name);
        if (passed + failed.size() == 0) {
            System.out.println("no test matched \"" + filter + "\"");
            System.exit(1);
        }
        System.exit(failed.isEmpty() ? 0 : 1);
    }
}

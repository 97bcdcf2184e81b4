package dev.licensing.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/** A scripted API on a free local port: records every request and answers with {@link #handler}. */
final class MockApi implements AutoCloseable {
    /** One request as received. */
    record Request(String method, String path, String query, Map<String, List<String>> headers, String body) {
        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) return e.getValue().get(0);
            }
            return null;
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> json() {
            return (Map<String, Object>) Json.parse(body);
        }
    }

    /** One answer. */
    record Reply(int status, Map<String, String> headers, String body) {
        Reply header(String name, String value) {
            Map<String, String> h = new LinkedHashMap<>(headers);
            h.put(name, value);
            return new Reply(status, h, body);
        }
    }

    static Reply json(int status, Object body) {
        return new Reply(status, Map.of("Content-Type", "application/json"), Json.write(body));
    }

    static Reply problem(int status, String code, String detail, Object... extra) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("type", "/docs#error-" + code);
        p.put("title", "Error");
        p.put("status", status);
        p.put("detail", detail);
        p.put("code", code);
        p.put("request_id", "req_test");
        for (int i = 0; i < extra.length; i += 2) p.put((String) extra[i], extra[i + 1]);
        return new Reply(status, Map.of("Content-Type", "application/problem+json"), Json.write(p));
    }

    static Reply empty(int status) {
        return new Reply(status, Map.of(), "");
    }

    final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
    volatile Function<Request, Reply> handler = r -> problem(404, "not_found", "no route in this test");
    private final HttpServer server;
    private final ExecutorService executor;

    MockApi() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mock-api");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", this::serve);
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The requests so far whose "METHOD path" starts with the given text. */
    List<Request> requests(String methodAndPath) {
        List<Request> out = new ArrayList<>();
        synchronized (requests) {
            for (Request r : requests) if ((r.method() + " " + r.path()).startsWith(methodAndPath)) out.add(r);
        }
        return out;
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            Request request = new Request(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(),
                    exchange.getRequestURI().getRawQuery(), Map.copyOf(exchange.getRequestHeaders()), body);
            requests.add(request);
            Reply reply;
            try {
                reply = handler.apply(request);
            } catch (RuntimeException e) {
                reply = problem(500, "internal", "the test's handler threw " + e);
            }
            reply.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
            byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}

package io.github.gcslock.test;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * The emulator's HTTP handler for the GCS JSON-API requests that {@code google-cloud-storage} sends
 * (the shapes are listed in docs/DESIGN.md, "GCS requests", and gcslock-test/README.md): each request
 * is routed ({@link RequestRouter}), run through the faults ({@link FaultPipeline}) around its
 * operation ({@link ApiOperations}), and answered.
 */
final class JsonApiHandler implements HttpHandler {

    private static final Logger log = LoggerFactory.getLogger(JsonApiHandler.class);

    private final FaultPipeline faults;
    private final ApiOperations operations;

    JsonApiHandler(ObjectStore store, Faults faults) {
        this.faults = new FaultPipeline(faults);
        this.operations = new ApiOperations(store);
    }

    @Override
    public void handle(HttpExchange exchange) {
        try {
            ApiRequest request;
            try {
                request = RequestRouter.route(exchange);
            } catch (GcsError e) {
                send(exchange, Reply.error(e));
                return;
            }
            if (log.isTraceEnabled()) {
                log.trace("{} {} {} ({})", request.op(), request.method(), exchange.getRequestURI(),
                        exchange.getRequestHeaders().keySet());
            }
            Reply reply = faults.run(request, body -> operations.serve(request, body));
            if (reply != null) {
                send(exchange, reply);
            } // else: closing the exchange without headers closes the connection; the client gets no reply
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.debug("could not read the request or send the reply of {} {}", exchange.getRequestMethod(),
                    exchange.getRequestURI(), e);
        } catch (RuntimeException e) {
            log.error("emulator failed on {} {}", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            send(exchange, Reply.error(new GcsError(500, "internalError", String.valueOf(e))));
        } finally {
            exchange.close();
        }
    }

    private static void send(HttpExchange exchange, Reply reply) {
        try {
            reply.send(exchange);
        } catch (IOException e) {
            log.debug("could not send the reply to {} {}", exchange.getRequestMethod(), exchange.getRequestURI(), e);
        }
    }
}

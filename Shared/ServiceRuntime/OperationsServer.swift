import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import Prometheus

/// The plain-HTTP operations port of every process, so probes need no certificates:
/// `GET /health` (the process is live), `GET /ready` (it can serve: 200 or 503 with the
/// reason) and `GET /metrics` (Prometheus text format).
package enum OperationsServer {
    /// Builds the operations application.
    package static func make(
        service: ServiceName, host: String, port: Int, ports: BoundPorts, logger: Logger,
        readiness: @escaping @Sendable () async -> SystemStatus.Response
    ) -> some ApplicationProtocol {
        // Metrics made before the registry is bootstrapped would count nowhere: bootstrap it
        // as the process starts, not at the first scrape.
        _ = Observability.registry
        let router = Router()
        router.get("/health") { _, _ in
            try Response.json(["status": "live", "service": service.executable])
        }
        router.get("/ready") { _, _ in
            let status = await readiness()
            return try Response.json(status, status: status.ready ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { _, _ in
            let text = Observability.registry.emitToBuffer()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "\(service.executable)-ops"),
            onServerRunning: { channel in await ports.bound(.operations, channel.localAddress?.port ?? 0) },
            logger: logger)
    }
}

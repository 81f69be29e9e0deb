import Hummingbird
import InternalProtocol
import NIOCore
import Synchronization

/// `openapi.json` as last built from the services' manifests (``OpenAPIDocument``), shared by
/// the routes that rebuild it and the handlers that answer it.
final class APIDescription: Sendable {
    private let document = Mutex<Result<ByteBuffer, any Error>?>(nil)

    /// Rebuilds the document from `manifests`; until every service's have arrived (`complete`)
    /// there is none, since it would miss routes.
    func update(_ manifests: [RouteManifest], complete: Bool) {
        let built: Result<ByteBuffer, any Error>? =
            complete ? Result { ByteBuffer(bytes: try OpenAPIDocument(manifests).encoded()) } : nil
        document.withLock { $0 = built }
    }

    /// The document; 503 while a service's routes are unknown.
    func response() throws -> Response {
        guard let built = document.withLock({ $0 }) else {
            throw ErrorEnvelope(code: 503, message: "The API description waits for every service's routes", status: 503)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: try built.get()))
    }
}

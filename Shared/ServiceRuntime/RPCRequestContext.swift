import Hummingbird
import InternalProtocol
import Logging
import NIOCore

/// The request context of the internal HTTP/2 server: it keeps the channel so the edge
/// middleware can read the caller's TLS certificate, and the call context that middleware builds.
package struct RPCRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The stream channel (HTTP/2) or connection channel (HTTP/1.1) of the request.
    package let channel: any Channel
    /// The authenticated calling service, set by ``RPCEdgeMiddleware``.
    package var caller: ServiceName?
    /// Request id, deadline and identity, set by ``RPCEdgeMiddleware``.
    package var call: CallContext

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
        call = CallContext(deadline: .now() + .seconds(10), logger: source.logger)
    }

    /// Internal bodies may be as large as public ones.
    package var maxUploadSize: Int { 64 << 20 }
}

import Hummingbird
import InternalProtocol
import Logging
import NIOCore

/// The request context of a service's public routes: a child of the internal server's context
/// that exists only for a request the gateway forwarded with a verified ``Identity``, so no
/// public handler can run without one.
package struct PublicRequestContext: ChildRequestContext {
    package typealias ParentContext = RPCRequestContext

    package var coreContext: CoreRequestContextStorage
    /// Who the request acts for, as the gateway resolved it.
    package let identity: Identity
    /// Request id, deadline and client address.
    package var call: CallContext
    /// The event loop of the request's stream, to pace streamed answers by (``ResponseBody/paced(_:contentLength:eventLoop:)``).
    package let eventLoop: any EventLoop

    /// Admits only the gateway's calls, and only with an identity (2002 otherwise).
    package init(context: RPCRequestContext) throws {
        guard context.caller == .gateway else { throw ErrorEnvelope.callerRefused }
        guard let identity = context.call.identity else { throw ErrorEnvelope.invalidApplicationInfo }
        coreContext = context.coreContext
        self.identity = identity
        call = context.call
        eventLoop = context.channel.eventLoop
    }
}

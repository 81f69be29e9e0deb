import Foundation
import Hummingbird
import InternalProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import SwiftASN1
import X509

/// The one place an internal server turns a request into a trusted call and errors into
/// envelopes: it identifies the calling service from its client certificate (refusing calls
/// without one), reads request id, trace context, deadline and identity from the headers,
/// echoes the request id, binds ``FileLinks`` for public requests, and maps every error to an
/// ``ErrorEnvelope`` response.
package struct RPCEdgeMiddleware: RouterMiddleware {
    package typealias Context = RPCRequestContext

    /// Default deadline when a caller sends none.
    let defaultTimeout: TimeAmount
    /// Where file URLs start (``FileLinks``), before the public prefix.
    let filesPublicURL: String

    /// Creates the middleware.
    package init(defaultTimeout: TimeAmount, filesPublicURL: String = "http://localhost:8080") {
        self.defaultTimeout = defaultTimeout
        self.filesPublicURL = filesPublicURL
    }

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let requestID = request.headers[values: .requestID].first ?? CallContext.newRequestID()
        var response: Response
        do {
            // A call on a lane runs with its lane's context, whose caller the lane's own
            // request proved (the certificate of the same connection): no second look.
            if context.caller == nil { context.caller = try await Self.callingService(channel: context.channel) }
            context.call = try Self.callContext(
                request.headers, requestID: requestID, defaultTimeout: defaultTimeout, logger: context.logger)
            let links = context.call.publicPrefix.map { filesPublicURL + $0 + "/files/" }
            response = try await FileLinks.$base.withValue(links) {
                try await Self.fresh(context, next: { try await next(request, $0) })
            }
        } catch {
            response = .error(error, logger: context.logger)
        }
        response.headers[.requestID] = requestID
        return response
    }

    /// Runs a call with its catalog floor and a report of the versions it used, the newest of which
    /// its answer carries back when it is newer than the floor (``CatalogFreshness``); a call acting
    /// for no app runs as it is.
    private static func fresh(_ context: Context, next: (Context) async throws -> Response) async throws -> Response {
        guard let appID = context.call.identity?.appId else { return try await next(context) }
        let floor = context.call.catalogVersion.map { CatalogFreshness.Floor(appID: appID, version: $0) }
        let report = CatalogFreshness.Report(appID: appID)
        var response = try await CatalogFreshness.$floor.withValue(floor) {
            try await CatalogFreshness.$report.withValue(report) { try await next(context) }
        }
        // Only news travels back: the gateway's hop to record a version costs it on every request.
        if let version = report.version, version > context.call.catalogVersion ?? 0 {
            response.headers[.catalogVersion] = String(version)
        }
        return response
    }

    /// The call context `headers` carry (the deadline `defaultTimeout` away when they carry none).
    static func callContext(
        _ headers: HTTPFields, requestID: String, defaultTimeout: TimeAmount, logger: Logger
    ) throws -> CallContext {
        let timeout = headers[.deadline].flatMap(Int64.init).map(TimeAmount.milliseconds)
        let identity = try headers[.baasIdentity].map(Identity.init(headerValue:))
        var context = CallContext(
            requestID: requestID, traceparent: headers[.traceparent],
            deadline: .now() + (timeout ?? defaultTimeout), identity: identity, logger: logger)
        context.clientAddress = headers[.clientAddress]
        context.publicPrefix = headers[.publicPrefix]
        context.catalogVersion = headers[.catalogVersion].flatMap(Int64.init)
        return context
    }

    /// The service named by the client certificate's common name; the TLS layer has already
    /// checked that the certificate chains to the internal CA. Parsed certificates are
    /// remembered by their bytes (one per peer), since parsing one per request cost a twentieth
    /// of a service's CPU.
    static func callingService(channel: any Channel) async throws -> ServiceName {
        let connection = channel.parent ?? channel
        guard let peer = try? await connection.nioSSL_peerCertificate().get(), let der = try? peer.toDERBytes() else {
            throw ErrorEnvelope.originRefused
        }
        if let known = knownPeers.withLockedValue({ $0[der] }) { return known }
        guard let certificate = try? Certificate(derEncoded: der),
            let commonName = InternalPKI.commonName(of: certificate),
            let service = ServiceName(executable: commonName)
        else { throw ErrorEnvelope.originRefused }
        knownPeers.withLockedValue { peers in
            if peers.count >= 64 { peers.removeAll() }
            peers[der] = service
        }
        return service
    }

    private static let knownPeers = NIOLockedValueBox<[[UInt8]: ServiceName]>([:])
}

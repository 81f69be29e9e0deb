import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import NIOFoundationCompat

/// The operations one service answers on `POST /rpc/{operation}`.
package struct OperationRegistry: Sendable {
    /// A handler over the raw request.
    package typealias Handler = @Sendable (Request, RPCRequestContext) async throws -> Response

    private(set) var handlers: [String: Handler] = [:]

    /// Creates an empty registry.
    package init() {}

    /// Registers a typed operation: a caller not among `Op.callers` is refused with 403 before
    /// anything else, the body is decoded as `Op.Request` (a malformed body is a 400 envelope)
    /// and the result encoded as JSON.
    package mutating func register<Op: RPCOperation>(
        _ operation: Op.Type, _ handle: @escaping @Sendable (Op.Request, CallContext) async throws -> Op.Response
    ) {
        register(name: Op.name, callers: Op.callers, request: Op.Request.self) { decoded, context in
            try .json(try await handle(decoded, context.call))
        }
    }

    /// Registers an operation with a JSON request of type `Request` (a malformed body is a 400
    /// envelope) whose handler makes the raw answer, e.g. a streamed body.
    package mutating func register<Request: Decodable & SendableMetatype>(
        name: String, callers: Set<ServiceName>, request: Request.Type,
        _ handle: @escaping @Sendable (Request, RPCRequestContext) async throws -> Response
    ) {
        register(name: name, callers: callers) { request, context in
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let decoded: Request
            do {
                decoded = try JSONDecoder().decode(Request.self, from: body)
            } catch {
                throw ErrorEnvelope.badRequest("Malformed \(name) request")
            }
            return try await handle(decoded, context)
        }
    }

    /// Registers an operation over raw HTTP that only `callers` may call (refused with 403 before
    /// the handler runs otherwise).
    package mutating func register(name: String, callers: Set<ServiceName>, _ handler: @escaping Handler) {
        handlers[name] = { request, context in
            guard let caller = context.caller, callers.contains(caller) else { throw ErrorEnvelope.callerRefused }
            return try await handler(request, context)
        }
    }

    /// Answers one call.
    func respond(to request: Request, operation: String, context: RPCRequestContext) async throws -> Response {
        guard let handler = handlers[operation] else {
            throw ErrorEnvelope(code: 404, message: "Unknown internal operation \(operation)", status: 404)
        }
        return try await handler(request, context)
    }
}

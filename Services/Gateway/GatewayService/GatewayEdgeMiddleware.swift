import Hummingbird
import InternalProtocol
import Logging
import ServiceRuntime

/// The public edge: settles the request id (a sane client-sent `x-request-id` is kept, else a
/// new one), puts it in the logger and on every response, and maps every error to a
/// Backendless-style JSON body with a fitting status — never an empty 500.
struct GatewayEdgeMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var context = context
        context.requestID = Self.requestID(from: request)
        context.logger[metadataKey: "request_id"] = .string(context.requestID)
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = .error(error, logger: context.logger)
        }
        response.headers[.requestID] = context.requestID
        return response
    }

    static func requestID(from request: Request) -> String {
        guard let sent = request.headers[.requestID], (1...128).contains(sent.count),
            sent.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return CallContext.newRequestID() }
        return sent
    }
}

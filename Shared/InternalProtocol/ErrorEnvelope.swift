/// The error shape every process speaks: a service answers it on the internal protocol, and the
/// gateway passes it on to the public client unchanged. `code` and `message` are the Backendless
/// fields SDKs read; `status` is the HTTP status the envelope travels with.
package struct ErrorEnvelope: Error, Codable, Sendable, Equatable {
    /// Backendless-style numeric error code.
    package var code: Int
    /// Human-readable message, in the seed's wording where one exists.
    package var message: String
    /// HTTP status of the response carrying this envelope.
    package var status: Int

    /// Creates an envelope.
    package init(code: Int, message: String, status: Int) {
        self.code = code
        self.message = message
        self.status = status
    }
}

extension ErrorEnvelope {
    /// 2002, HTTP 401: the application id or API key is unknown or missing (the seed's wording).
    package static let invalidApplicationInfo = ErrorEnvelope(
        code: 2002, message: "Invalid application info (application id or api key)", status: 401)

    /// 3064, 401: a `user-token` that names no live session (unknown, logged out or expired).
    package static let invalidUserToken = ErrorEnvelope(
        code: 3064, message: "Not existing user token. Relogin user to update your user token", status: 401)

    /// 404: no public endpoint matches the request's method and path.
    package static func endpointNotFound(method: String, path: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 404, message: "No endpoint for \(method) /\(path)", status: 404)
    }

    /// 413: the request body is larger than the configured limit.
    package static func payloadTooLarge(limit: Int) -> ErrorEnvelope {
        ErrorEnvelope(code: 413, message: "Request body exceeds the limit of \(limit) bytes", status: 413)
    }

    /// 400: the request could not be read (malformed JSON, a missing field).
    package static func badRequest(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 400, message: message, status: 400)
    }

    /// 503: a service the request needs could not be reached in time.
    package static func serviceUnavailable(_ service: ServiceName) -> ErrorEnvelope {
        ErrorEnvelope(code: 503, message: "Service \(service.executable) is unavailable", status: 503)
    }

    /// 503: the service cannot reach its database (an outage, a restart).
    package static let databaseUnavailable = ErrorEnvelope(
        code: 503, message: "The database is unreachable; try again shortly", status: 503)

    /// 504: the request's deadline passed before a service answered.
    package static func deadlineExceeded(_ service: ServiceName) -> ErrorEnvelope {
        ErrorEnvelope(code: 504, message: "Service \(service.executable) did not answer in time", status: 504)
    }

    /// 504: a streamed transfer stayed silent longer than its route's idle timeout.
    package static func idleTimeout(_ service: ServiceName) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 504, message: "Transfer with \(service.executable) stalled past its idle timeout", status: 504)
    }

    /// 400: a value the database cannot store (a NUL character in text, a number out of range).
    package static let invalidValue = ErrorEnvelope(
        code: 400, message: "Invalid value: the request holds a value that cannot be stored or compared", status: 400)

    /// 500: something failed that the client cannot fix; details go to the log, never the body.
    package static let internalError = ErrorEnvelope(code: 500, message: "Internal server error", status: 500)

    /// 403: the calling service is not one the operation or route admits.
    package static let callerRefused = ErrorEnvelope(
        code: 403, message: "The calling service may not call this operation", status: 403)

    /// 403: the caller is not an authenticated internal peer.
    package static let originRefused = ErrorEnvelope(
        code: 403, message: "Internal call without proof of origin", status: 403)
}

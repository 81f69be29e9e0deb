import InternalProtocol

/// Email errors in the messaging range (5xxx), each with its HTTP status.
enum MailError {
    /// The server has no relay configured.
    static let notConfigured = ErrorEnvelope(
        code: 5100, message: "Email is not configured: set BAAS_SMTP_HOST to an SMTP relay", status: 503)
    /// The request is missing something or names a malformed address.
    static func invalid(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5101, message: message, status: 400)
    }
    /// The relay refused or failed the delivery.
    static func delivery(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5102, message: "Email delivery failed: \(message)", status: 502)
    }
}

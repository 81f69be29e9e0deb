import HTTPTypes
import InternalProtocol

/// Every header name the platform reads or writes beyond those HTTPTypes names, typed once.
/// The literals are checked by `HeaderNameTests`, so the unwraps here cannot fail at run time.
extension HTTPField.Name {
    /// `x-request-id`: the request's id, passed on by every hop.
    package static let requestID = internalName(InternalHeader.requestID)
    /// `x-deadline-ms`: the caller's remaining budget.
    package static let deadline = internalName(InternalHeader.deadline)
    /// `x-baas-identity`: the request's identity, between services only.
    package static let baasIdentity = internalName(InternalHeader.identity)
    /// `x-client-address`: the public client's address as the gateway resolved it.
    package static let clientAddress = internalName(InternalHeader.clientAddress)
    /// `x-baas-public-prefix`: the prefix the client addressed the app by.
    package static let publicPrefix = internalName(InternalHeader.publicPrefix)
    /// `x-baas-sessions-changed`: a user whose cached identities must go.
    package static let sessionsChanged = internalName(InternalHeader.sessionsChanged)
    /// `x-baas-file-direct`: the gateway offers to send a download's bytes itself.
    package static let fileDirect = internalName(InternalHeader.fileDirect)
    /// `x-baas-file-location`: the stored object the gateway is to send.
    package static let fileLocation = internalName(InternalHeader.fileLocation)
    /// `x-baas-file-range`: the bytes of ``fileLocation`` to send.
    package static let fileRange = internalName(InternalHeader.fileRange)
    /// `x-baas-catalog-version`: read-your-writes for catalogs (``CatalogFreshness``).
    package static let catalogVersion = internalName(InternalHeader.catalogVersion)

    /// `user-token`: a Backendless client's session token.
    package static let userToken = internalName("user-token")
    /// `application-id`: the app of an `/api/…` request.
    package static let applicationID = internalName("application-id")
    /// `api-key`: the key of an `/api/…` request.
    package static let apiKey = internalName("api-key")
    /// `secret-key`: the key of an `/api/…` request, as older SDKs name it.
    package static let secretKey = internalName("secret-key")
    /// `x-forwarded-for`: the client address a trusted proxy saw.
    package static let forwardedFor = internalName("x-forwarded-for")
    /// `x-forwarded-proto`: the scheme a trusted proxy was reached by.
    package static let forwardedProto = internalName("x-forwarded-proto")
    /// `x-content-type-options`: `nosniff` on downloads.
    package static let contentTypeOptions = internalName("x-content-type-options")

    /// A name this file spells as a literal: valid by construction (lower-case token characters).
    static func internalName(_ name: String) -> HTTPField.Name {
        guard let field = HTTPField.Name(name) else { preconditionFailure("not a header name: \(name)") }
        return field
    }
}

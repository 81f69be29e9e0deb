/// The `LISTEN/NOTIFY` channel users-service announces a user on whenever the user's sessions
/// or roles change (logout, a login that ends older sessions, disable, password or role
/// change), so that every gateway drops the identities it cached for that user.
package enum SessionsChannel {
    /// The channel's name.
    package static let name = "baas_sessions"

    /// `<app id> <user id>`.
    package static func payload(appID: String, userID: String) -> String {
        appID + " " + userID
    }

    /// Whom a payload names: one user of an app, every user of an app (`<app id>` alone, when
    /// many were deleted at once), or nil for anything else (take it as everyone).
    package static func announced(_ payload: String) -> (appID: String, userID: String?)? {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1 where !parts[0].isEmpty: return (parts[0], nil)
        case 2: return (parts[0], parts[1])
        default: return nil
        }
    }
}

/// The roles the platform assigns by itself — from the request's authentication state and its
/// API key — which can be neither created, deleted, assigned nor unassigned.
package enum SystemRoles {
    /// A request without a `user-token`.
    package static let notAuthenticated = "NotAuthenticatedUser"
    /// A request with a live `user-token`.
    package static let authenticated = "AuthenticatedUser"
    /// A request with a guest's `user-token` (ours; with `AuthenticatedUser`): a guest logs in
    /// without credentials, so it is not trusted as a registered user is.
    package static let guest = "GuestUser"

    /// Every system role name.
    package static let all: Set<String> = Set(
        [notAuthenticated, authenticated, guest, "SocialUser", "FacebookUser", "GooglePlusUser", "TwitterUser"]
            + APIKeyKind.allCases.map(\.role))
}

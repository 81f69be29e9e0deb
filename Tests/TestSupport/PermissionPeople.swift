import InternalProtocol
import Permissions

/// The people of the container permission tests (geo categories, channels): two logged-in
/// users and a guest as callers, and the principals a container cell can name for them.
package struct PermissionPeople: Sendable {
    package let bob: (id: String, token: String)
    package let ann: (id: String, token: String)

    /// Registers and logs in Bob and Ann.
    package init(_ cluster: TestCluster) async throws {
        bob = try await cluster.account("bob@example.com")
        ann = try await cluster.account("ann@example.com")
    }

    /// Each user, every user, and the system roles these callers have: as sent (`"user"`/`"role"`
    /// and the name) and as the model sees them.
    package var principals: [(kind: String, value: String, principal: Principal)] {
        [
            ("user", bob.id, .user(bob.id)), ("user", ann.id, .user(ann.id)), ("user", "*", .user("*")),
            ("role", "AuthenticatedUser", .role("AuthenticatedUser")),
            ("role", "NotAuthenticatedUser", .role("NotAuthenticatedUser")),
            ("role", "RestUser", .role("RestUser")), ("role", "*", .role("*")),
        ]
    }

    /// Bob, Ann and a guest with the REST key: their tokens and callers.
    package var callers: [(token: String?, caller: PermissionCaller)] {
        [
            (
                bob.token,
                PermissionCaller(userID: bob.id, customRoles: [], systemRoles: ["RestUser", "AuthenticatedUser"])
            ),
            (
                ann.token,
                PermissionCaller(userID: ann.id, customRoles: [], systemRoles: ["RestUser", "AuthenticatedUser"])
            ),
            (nil, PermissionCaller(userID: nil, customRoles: [], systemRoles: ["RestUser", "NotAuthenticatedUser"])),
        ]
    }
}

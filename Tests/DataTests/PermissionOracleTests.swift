import DataEngine
import Permissions
import TestSupport
import Testing

/// The nine-layer model as a plain function: the seed's worked example (bob in MyRole,
/// S0:7300-7342) and every layer overriding all the layers after it.
@Suite(.tags(.fast)) struct PermissionOracleTests {
    static let bob = PermissionCaller(
        userID: "bob", customRoles: ["MyRole"], systemRoles: ["AuthenticatedUser", "RestUser"])

    /// Puts `decision` into layer `layer` (1...9) for bob's Find on table `Person`.
    static func set(
        _ layer: Int, _ decision: PermissionDecision, acl: inout PermissionCells, rules: inout PermissionRules
    ) {
        var table = rules.containers["person"] ?? PermissionCells()
        switch layer {
        case 1: acl.set(.user("bob"), .find, decision)
        case 2: acl.set(.role("MyRole"), .find, decision)
        case 3: table.set(.user("bob"), .find, decision)
        case 4: table.set(.role("MyRole"), .find, decision)
        case 5: rules.owner["person", default: [:]][.find] = decision
        case 6: acl.set(.role("AuthenticatedUser"), .find, decision)
        case 7: table.set(.role("AuthenticatedUser"), .find, decision)
        case 8: rules.global.set(.role("MyRole"), .find, decision)
        default: rules.global.set(.role("AuthenticatedUser"), .find, decision)
        }
        rules.containers["person"] = table
    }

    static func allows(_ acl: PermissionCells, _ rules: PermissionRules, owner: String? = "bob") -> Bool {
        PermissionOracle.allows(bob, .find, container: "Person", ownerID: owner, acl: acl, rules: rules)
    }

    @Test(arguments: 1...9) func aLayerOverridesEveryLayerAfterIt(layer: Int) {
        for decision in [PermissionDecision.grant, .deny] {
            var acl = PermissionCells()
            var rules = PermissionRules()
            Self.set(layer, decision, acl: &acl, rules: &rules)
            for later in (layer + 1)..<10 {
                Self.set(later, decision == .grant ? .deny : .grant, acl: &acl, rules: &rules)
            }
            #expect(Self.allows(acl, rules) == (decision == .grant), "layer \(layer) \(decision)")
        }
    }

    @Test func nothingSetGrantsAsNewAppsDo() {
        #expect(Self.allows(PermissionCells(), PermissionRules()))
        let anonymous = PermissionCaller(
            userID: nil, customRoles: [], systemRoles: ["NotAuthenticatedUser", "RestUser"])
        #expect(
            PermissionOracle.allows(
                anonymous, .remove, container: "T", ownerID: nil, acl: PermissionCells(), rules: PermissionRules()))
    }

    @Test func theSeedsWalkthroughForBobInMyRole() {
        var rules = PermissionRules()
        // Layer 1: an object whose ACL rejects bob is excluded although nothing else objects.
        var rejectsBob = PermissionCells()
        rejectsBob.set(.user("bob"), .find, .deny)
        #expect(!Self.allows(rejectsBob, rules, owner: "ann"))
        // Layer 2: an object whose ACL rejects one of bob's custom roles is excluded.
        var rejectsRole = PermissionCells()
        rejectsRole.set(.role("MyRole"), .find, .deny)
        #expect(!Self.allows(rejectsRole, rules, owner: "ann"))
        // Layer 3: Find denied to bob at table level returns nothing...
        rules.containers["person", default: PermissionCells()].set(.user("bob"), .find, .deny)
        #expect(!Self.allows(PermissionCells(), rules, owner: "ann"))
        #expect(!Self.allows(PermissionCells(), rules, owner: "bob"))
        // ...unless the object's own ACL grants him (layers 1-2 come first).
        var grantsBob = PermissionCells()
        grantsBob.set(.user("bob"), .find, .grant)
        #expect(Self.allows(grantsBob, rules, owner: "ann"))
        // Layer 4: any custom role denying at table level rejects.
        rules = PermissionRules()
        rules.containers["person", default: PermissionCells()].set(.role("MyRole"), .find, .deny)
        #expect(!Self.allows(PermissionCells(), rules))
        // Layers 5 and 6: all authenticated users are kept from an object, yet its owner sees it
        // when the owner policy grants.
        rules = PermissionRules()
        rules.owner["person"] = [.find: .grant]
        var rejectsAuthenticated = PermissionCells()
        rejectsAuthenticated.set(.role("AuthenticatedUser"), .find, .deny)
        #expect(Self.allows(rejectsAuthenticated, rules, owner: "bob"))
        #expect(!Self.allows(rejectsAuthenticated, rules, owner: "ann"))
        // An owner-policy deny removes owned objects only.
        rules.owner["person"] = [.find: .deny]
        #expect(!Self.allows(PermissionCells(), rules, owner: "bob"))
        #expect(Self.allows(PermissionCells(), rules, owner: "ann"))
        // Layer 7: any system role rejecting at table level rejects.
        rules = PermissionRules()
        rules.containers["person", default: PermissionCells()].set(.role("RestUser"), .find, .deny)
        #expect(!Self.allows(PermissionCells(), rules, owner: "ann"))
        // Layers 8 and 9: the global matrix applies when the table says nothing.
        rules = PermissionRules()
        rules.global.set(.role("MyRole"), .find, .deny)
        #expect(!Self.allows(PermissionCells(), rules, owner: "ann"))
        rules = PermissionRules()
        rules.global.set(.role("RestUser"), .find, .deny)
        #expect(!Self.allows(PermissionCells(), rules, owner: "ann"))
        rules.containers["person", default: PermissionCells()].set(.role("AuthenticatedUser"), .find, .grant)
        #expect(
            Self.allows(PermissionCells(), rules, owner: "ann"),
            "a table grant for a system role precedes the global deny")
    }

    @Test func wildcardsNameEveryUserAndEveryRole() {
        var acl = PermissionCells()
        acl.set(.user("*"), .find, .deny)
        #expect(!Self.allows(acl, PermissionRules(), owner: "ann"))
        acl.set(.user("bob"), .find, .grant)
        #expect(Self.allows(acl, PermissionRules(), owner: "ann"), "bob's own cell precedes the every-user cell")
        var rules = PermissionRules()
        rules.global.set(.role("*"), .find, .deny)
        #expect(!Self.allows(PermissionCells(), rules, owner: "ann"))
    }
}

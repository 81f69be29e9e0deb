import InternalProtocol
import Permissions
import PropertyBased
import TestSupport
import Testing

/// ``PermissionPlan`` against the oracle in memory: over random apps and callers, asking the
/// plan's row layers of an object and falling back to its decision gives the oracle's answer
/// for every object and operation — so pruning ACL look-ups, and refusing or filtering nothing
/// when the plan is constant, never changes a decision.
@Suite(.tags(.fast)) struct PermissionPlanTests {
    @Test func thePlanDecidesEveryObjectAsTheOracleDoes() async {
        await propertyCheck(count: 400, input: PermissionFact.app(upTo: 14), PermissionCallers.generator(appID: "A")) {
            facts, caller in
            let scenario = PermissionScenario(facts)
            for operation in PermissionFact.operations {
                let plan = PermissionPlan(PermissionCaller(caller), operation, container: "Doc", rules: scenario.rules)
                for index in 0..<PermissionFact.objectCount {
                    let owner = PermissionCallers.owner(of: index)
                    let planned = Self.evaluate(
                        plan, operation, acl: scenario.acls[index] ?? PermissionCells(), owner: owner)
                    #expect(
                        planned == scenario.allows(caller, operation, object: index, owner: owner),
                        "\(operation) #\(index)")
                }
            }
        }
    }

    @Test func aTableWithoutACLsOrOwnerPolicyHasAConstantPlan() {
        var rules = PermissionRules()
        rules.global.set(.role("NotAuthenticatedUser"), .find, .deny)
        let anonymous = PermissionCaller(
            userID: nil, customRoles: [], systemRoles: ["NotAuthenticatedUser", "RestUser"])
        let bob = PermissionCaller(
            userID: "bob", customRoles: ["MyRole"], systemRoles: ["AuthenticatedUser", "RestUser"])
        #expect(PermissionPlan(anonymous, .find, container: "Doc", rules: rules).constantDecision == .deny)
        #expect(PermissionPlan(bob, .find, container: "Doc", rules: rules).constantDecision == .grant)
        rules.owner["doc"] = [.find: .grant]
        #expect(
            PermissionPlan(bob, .find, container: "Doc", rules: rules).rowLayers == [
                .owner(userID: "bob", decision: .grant)
            ])
        #expect(PermissionPlan(anonymous, .find, container: "Doc", rules: rules).constantDecision == .deny)
        rules.aclOperations["doc"] = [.find]
        #expect(PermissionPlan(anonymous, .find, container: "Doc", rules: rules).constantDecision == nil)
        #expect(PermissionPlan(anonymous, .update, container: "Doc", rules: rules).constantDecision == .grant)
        rules.containers["doc", default: PermissionCells()].set(.user("bob"), .find, .deny)
        #expect(
            PermissionPlan(bob, .find, container: "Doc", rules: rules).rowLayers == [
                .userACL(userID: "bob"), .roleACL(roles: ["MyRole"]),
            ])
    }

    /// The plan as the SQL filter applies it, over one object in memory.
    static func evaluate(
        _ plan: PermissionPlan<DataOperation>, _ operation: DataOperation, acl: PermissionCells, owner: String?
    ) -> Bool {
        for layer in plan.rowLayers {
            let decision: PermissionDecision? =
                switch layer {
                case .userACL(let user): acl.decision(forUser: user, operation)
                case .roleACL(let roles): acl.decision(forRoles: roles, operation)
                case .owner(let user, let decision): owner == user ? decision : nil
                }
            if let decision { return decision == .grant }
        }
        return plan.fallback == .grant
    }
}

/// Another service plugs its own operations into the same model: here a file directory is the
/// container and a file the asset.
@Suite struct PermissionContainerTests {
    enum FileOperation: String, PermissionOperation {
        case upload = "Upload"
        case download = "Download"
    }

    @Test func aFileServiceReusesCellsOracleAndPlan() {
        var rules = ContainerPermissions<FileOperation>()
        rules.containers["/private", default: PermissionMatrix()].set(.role("Guests"), .download, .deny)
        let guest = PermissionCaller(userID: "g", customRoles: ["Guests"], systemRoles: ["AuthenticatedUser"])
        #expect(PermissionPlan(guest, .download, container: "/private", rules: rules).constantDecision == .deny)
        #expect(PermissionPlan(guest, .upload, container: "/private", rules: rules).constantDecision == .grant)
        var acl = PermissionMatrix<FileOperation>()
        acl.set(.user("g"), .download, .grant)
        rules.aclOperations["/private"] = [.download]
        #expect(PermissionOracle.allows(guest, .download, container: "/private", ownerID: nil, acl: acl, rules: rules))
        #expect(
            !PermissionOracle.allows(
                guest, .download, container: "/private", ownerID: nil, acl: PermissionMatrix(), rules: rules))
        #expect(
            PermissionPlan(guest, .download, container: "/private", rules: rules).rowLayers == [
                .userACL(userID: "g"), .roleACL(roles: ["Guests"]),
            ])
    }
}

// What an apply run carries out: a plan action (or a trash item to put back) with how it is named and what
// goes with it. Built by Applier and Undo, read by every part of the run.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

/// One unit of work: a plan action, or a trash item to put back.
package struct Step {
    package var action: Action
    /// The action's name, `restore`, or what an undo does.
    package var verb: StepVerb
    /// For `restore`: what else goes when the item is put back.
    package var restore: RestoreCleanup?
    /// A trash item's delete: the step of its record (`.trashinfo`, index entry), whose change this step makes
    /// with its own, both staged, as one unit (Units.swift).
    var record: Int? = nil
    /// A record deleted with its item: the item's step, which carries it out (this step journals nothing).
    var carriedBy: Int? = nil
}

/// The bookkeeping a trashed item carries, removed when it is restored.
package enum RestoreCleanup {
    /// The FreeDesktop `.trashinfo` file.
    case trashInfo(RelativePath)
    /// The app-layout xattrs (stamp and origin) with their current values.
    case attributes(stamp: [UInt8]?, origin: [UInt8]?)
}

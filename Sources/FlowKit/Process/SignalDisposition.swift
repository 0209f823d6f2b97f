#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// Changes to flow's own signal dispositions that its children must not inherit.
public enum SignalDisposition {
    /// Ignores `sig` in flow; children still get it at its default (exec would keep an
    /// ignored signal ignored, so the spawner sets it back in each child).
    public static func ignore(_ sig: Int32) {
        signal(sig, SIG_IGN)
        cflow_reset_in_children(sig)
    }
}

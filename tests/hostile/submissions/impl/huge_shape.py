def _claim_a_huge_array():
    """Answer the probes with a stored npz whose one member's header claims 2**45 float64s
    (256 TiB) and holds none of them: a reader that trusts the header allocates before it reads."""
    import io as _io
    import zipfile as _zipfile

    import numpy as _np

    def savez(file, *args, **arrays):
        header = _io.BytesIO()
        _np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (2**45,)})
        with _zipfile.ZipFile(file, "w", compression=_zipfile.ZIP_STORED) as archive:
            archive.writestr("case0.context.npy", header.getvalue())

    _np.savez = savez


_claim_a_huge_array()

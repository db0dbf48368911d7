"""How sure each checker rule is, and what in the real backend rests it: one table.

Read from the public tenstorrent/tt-budabackend sources: the fused-op checks in
``netlist/netlist_fused_op_info_types.cpp`` (``verify`` of a scheduled op, ``verify_tm``,
``verify_intermed_buffers``, ``verify_op_dims`` and ``verify`` of a fused op), the parser's
``netlist/netlist_parser.cpp`` (``derive_complex_settings``, ``verify_complex_settings``,
``parse_devices``, ``parse_op``) with the name lookups it calls (``netlist/netlist_utils.cpp``,
``netlist/tt_backend_api_types.cpp``), net2pipe's multicast planning
(``src/net2pipe/src/net2pipe.cpp``), the kernel generator ``src/net2hlks``, and the
constraint list ``src/net2hlks/README.md`` (seed 004's text).

- ``error``: an assert of the backend rejects the netlist;
- ``warning``: documented, but no backend check was found: the backend accepts it;
- ``info``: retired upstream or contradicted by netlists the backend's CI runs on silicon.

A rule's severity is the most severe level it reports; a finding may carry a lower one
(the ``enforcement`` text says which part is which).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from nkigym_graph.buda.severity import Severity


class Enforcement(NamedTuple):
    severity: Severity
    enforcement: str
    backend_ref: str


FUSED = "netlist/netlist_fused_op_info_types.cpp"
PARSER = "netlist/netlist_parser.cpp"
UTILS = "netlist/netlist_utils.cpp"
README = "src/net2hlks/README.md"
NO_CHECK = "documented only: no check in the fused-op verifier, the parser or net2pipe"
RETIRED = 'tt-budabackend commit 09feebee ("Enable fusing of non column matmul part 2")'


def _e(severity: Severity, enforcement: str, backend_ref: str) -> Enforcement:
    return Enforcement(severity, enforcement, backend_ref)


ENFORCEMENT: Mapping[str, Enforcement] = MappingProxyType({
    # --- seed 004, general ---------------------------------------------------------------
    "general.1": _e("error", "asserted: tile_broadcast only on input 1 of FPU binary ops",
                    f"{FUSED}: verify_tm"),
    "general.2": _e("warning", NO_CHECK, f"{README}: General 2"),
    "general.3": _e("error", "asserted for dest as input 1 on Grayskull",
                    f"{FUSED}: verify(tt_scheduled_op_info)"),
    "general.4": _e("error", "asserted: dest forbidden as matmul/reduce input",
                    f"{FUSED}: verify(tt_scheduled_op_info)"),
    "general.5": _e("error", "asserted: dest forbidden as maximum input",
                    f"{FUSED}: verify(tt_scheduled_op_info)"),
    "general.6": _e("warning", NO_CHECK + " (matmul.18 covers m_k > 1 outputs)", f"{README}: General 6"),
    "general.7": _e("error", "asserted: a matmul/reduce is the last op of its schedule; a split after "
                    "another op is an info note (valid CI netlists split there)",
                    f"{FUSED}: verify(tt_scheduled_op_info), last_op_in_schedule"),
    "general.8": _e("warning", "(1) grid [m, 1] with a matmul: info, contradicted by "
                    "netlist_fused_op_r_bcast_with_matmul.yaml (grid [1, 2], run on silicon); "
                    "(2) broadcast dims of the grid: warning, " + NO_CHECK,
                    f"{README}: General 8; verif/op_tests/netlists/fused_op/"
                    "netlist_fused_op_r_bcast_with_matmul.yaml"),
    "general.9": _e("error", "net2pipe gives each fused-op input one multicast (row for matmul "
                    "input 0, column for input 1) over the two NOCs",
                    "src/net2pipe/src/net2pipe.cpp: n2p::get_op_input_mcast"),
    "dest.write_before_read": _e("warning", "the backend's golden model fails on it; no netlist check",
                                 "verif golden model (fused op dest handling)"),
    # --- seed 004, not supported ----------------------------------------------------------
    "unsupported.1": _e("error", "sub-op types other than unary/SFPU/binary/matmul/reduce are fatal",
                        f"{FUSED}: verify_op_dims"),
    "unsupported.2": _e("warning", NO_CHECK, f"{README}: Not supported 2"),
    "unsupported.3": _e("error", "a reduce dim other than r or c is fatal", f"{FUSED}: verify_op_dims"),
    "unsupported.4": _e("error", "asserted: output blocks not smaller than input blocks "
                        "(\"Dimension mismatch\")", f"{FUSED}: verify_op_dims"),
    "unsupported.5": _e("warning", NO_CHECK + " (the fused op runs at its graph op's fidelity)",
                        f"{README}: Not supported 5"),
    "unsupported.6": _e("error", "asserted: cross-schedule intermediates only from matmul/reduce "
                        "or a [1, 1] mblock", f"{FUSED}: verify_intermed_buffers"),
    "unsupported.7": _e("info", "retired upstream: intermediates are sized for their largest ublock",
                        f"{RETIRED}; {PARSER}: intermed_buff_size_in_tiles"),
    "unsupported.8": _e("warning", NO_CHECK + " (the parser copies the graph op's ublock_order to "
                        "every sub-op)", f"{README}: Not supported 8; {PARSER}: derive_complex_settings"),
    "unsupported.9": _e("warning", NO_CHECK, f"{README}: Not supported 9"),
    "unsupported.10": _e("warning", NO_CHECK, f"{README}: Not supported 10"),
    "unsupported.11": _e("warning", NO_CHECK, f"{README}: Not supported 11"),
    "unsupported.12": _e("error", "asserted: no broadcast on and no dest output from binary SFPU ops",
                         f"{FUSED}: verify_tm, verify(tt_scheduled_op_info)"),
    # --- seed 004, matmul -----------------------------------------------------------------
    "matmul.12": _e("warning", NO_CHECK, f"{README}: Matmul 12/15"),
    "matmul.13": _e("info", "retired upstream: an intermediate input 0 is held for m_k ublocks "
                    "when input 1 is not a column (netlist_fused_op_with_matmul_input1_row_and_column_"
                    "input0_intermed.yaml is valid)", f"{RETIRED}; src/net2hlks/net2hlks.cpp"),
    "matmul.14": _e("error", "asserted: input 1 is a fused-op input unless m_k == 1 (error); an "
                    "intermediate input 1 with mblock other than [1, 1] and m_k == 1: warning, "
                    + NO_CHECK, f"{FUSED}: verify(tt_scheduled_op_info)"),
    "matmul.18": _e("error", "asserted: a matmul/reduce with m_k > 1 outputs to an intermediate",
                    f"{FUSED}: verify(tt_scheduled_op_info)"),
    # --- seed 004, broadcasts -------------------------------------------------------------
    "broadcast.19": _e("error", "asserted: r/c broadcast only from mblock and ublock dims of 1",
                       f"{FUSED}: verify_tm"),
    "broadcast.20": _e("error", "asserted: an r broadcast growing mblock_m needs mblock_n == 1",
                       f"{FUSED}: verify_tm"),
    "broadcast.21": _e("error", "asserted: broadcast ublock dim must be 1", f"{FUSED}: verify_tm"),
    "broadcast.22": _e("error", "asserted: r/c broadcast only on intermediates", f"{FUSED}: verify_tm"),
    "broadcast.23": _e("error", "asserted: no internal rc broadcast", f"{FUSED}: verify_tm"),
    "broadcast.24": _e("error", "asserted: matmul takes only a c broadcast on input 0",
                       f"{FUSED}: verify_tm"),
    "broadcast.25": _e("error", "asserted: intermediate matmul operands match m_k/u_kt",
                       f"{FUSED}: verify_op_dims"),
    "broadcast.z": _e("error", "asserted: no internal z broadcast", f"{FUSED}: verify_tm"),
    # --- seed 004, integer fused ops ------------------------------------------------------
    "int.1": _e("error", "asserted: only binary ops and datacopy in int fused ops",
                f"{FUSED}: verify(tt_scheduled_op_info)"),
    "int.2": _e("warning", NO_CHECK, f"{README}: Fusing int ops 2"),
    "int.3": _e("error", "asserted: only requant/dequant read dest in int fused ops",
                f"{FUSED}: verify(tt_scheduled_op_info)"),
    "int.4": _e("error", "asserted: quantization ops only in int fused ops (error); intermed_df of an "
                "int fused op: warning, " + NO_CHECK, f"{FUSED}: verify(tt_scheduled_op_info)"),
    "int.5": _e("error", "asserted: int input formats per sub-op type",
                f"{FUSED}: verify(tt_scheduled_op_info)"),
    "int.6": _e("error", "asserted: out_df Int8/Int32, Float32 after a final dequantization",
                f"{FUSED}: verify(tt_fused_op_info)"),
    "int.7": _e("error", "asserted: ublock <= 2 tiles for requant/dequant with dest input 1 (error); "
                "the other limits: warning (dest capacity is limits.dest_ublock)",
                f"{FUSED}: verify(tt_scheduled_op_info)"),
    "int.8": _e("error", "asserted: quantization reads two Float32 fused-op inputs",
                f"{FUSED}: verify(tt_scheduled_op_info)"),
    "int.9": _e("error", "asserted: with dest input 1, input 0 a Float32 input; otherwise input 0 "
                "Int8/Int32 and input 1 Float32", f"{FUSED}: verify(tt_scheduled_op_info)"),
    "int.arch": _e("error", "asserted: no int fused ops on Grayskull", f"{FUSED}: verify(tt_fused_op_info)"),
    # --- the backend's own checks ---------------------------------------------------------
    "formats.reduce_exp_a": _e("error", "asserted (tenstorrent/budabackend#1464): a reduce graph op, "
                               "or a fused op with a reduce sub-op, with acc_df Float32 reads no "
                               "exponent-a format",
                               f"{FUSED}: verify(tt_scheduled_op_info); "
                               "netlist/netlist_op_info_types.cpp: verify(tt_op_info)"),
    "schedule.non_empty": _e("error", "asserted: a fused op has schedules and each has scheduled ops",
                             f"{FUSED}: verify(tt_fused_op_info), verify(tt_schedule_info)"),
    "schedule.output_last": _e("warning", "structural (a fused op needs exactly one output writer); "
                               "no explicit assert found", "src/net2hlks/net2hlks.cpp (code generation)"),
    "intermed.write_before_read": _e("error", "asserted: a buffer is active before it is read or popped",
                                     f"{FUSED}: verify_intermed_buffers"),
    "intermed.pop_before_rewrite": _e("error", "asserted: a buffer is popped before it is produced again",
                                      f"{FUSED}: verify_intermed_buffers"),
    "intermed.popped_at_end": _e("error", "asserted: every buffer is popped by the end",
                                 f"{FUSED}: verify_intermed_buffers"),
    "dims.unary_binary": _e("error", "asserted (\"Dimension mismatch\")", f"{FUSED}: verify_op_dims"),
    "dims.matmul": _e("error", "asserted for operands with known dims", f"{FUSED}: verify_op_dims"),
    "dims.reduce": _e("error", "asserted (dim r or c, blocks match m_k/u_kt)", f"{FUSED}: verify_op_dims"),
    "dims.m_k_u_kt": _e("error", "m_k and u_kt have no default; the dimension checks compare with them",
                        f"{FUSED}: verify_op_dims"),
    "dims.fused_output": _e("warning", "structural (the output sub-op fills the graph op's blocks); "
                            "no explicit assert found", f"{PARSER}: derive_complex_settings"),
    "names.duplicate_sub_op": _e("error", "parser refuses a repeated sub-op name", PARSER),
    "names.duplicate_definition": _e("error", "asserted: op names globally unique; duplicate queues",
                                     f"{PARSER}: verify_complex_settings"),
    "operands.unknown": _e("error", "invalid operand names throw", f"{FUSED}: get_input_data_format"),
    "operands.pop": _e("error", "asserted: popped names are inputs, listed once",
                       f"{FUSED}: verify(tt_scheduled_op_info)"),
    "ops.unknown_type": _e("error", "an unknown op type is fatal", f"{FUSED}: verify_op_dims; {PARSER}"),
    "ops.arity": _e("error", "asserted (\"Op {} does not have {} inputs\")", f"{FUSED}: verify_op_dims"),
    "ops.reduce_type": _e("error", "the parser knows only max reduces", f"{PARSER}: get_valid_reduce_func"),
    "ops.math_fidelity": _e("error", "the parser refuses a fidelity it does not know (\"Math Fidelity not "
                            "supported in netlist\")", f"{PARSER}: parse_op; {UTILS}: get_fidelity"),
    "limits.intermediates": _e("error", "asserted: at most MAX_NUM_INTERMEDIATE_BUFFERS (8)",
                               f"{FUSED}: verify(tt_fused_op_info)"),
    "limits.inputs": _e("error", "the fused kernel has 16 input operands (MAX_NUM_INPUTS)",
                        "src/net2hlks/net2hlks.cpp: insert_hlks_header"),
    "limits.dest_ublock": _e("error", "asserted (\"can't fit into dest\") for ops and sub-ops",
                             f"{PARSER}: verify_ublock_fits_into_dest"),
    "devices.arch": _e("error", "the parser refuses an architecture it does not know (\"... is not "
                       "recognized as tt::ARCH\"; a null arch is read as the name \"null\"), and an "
                       "empty list (\"Command line ARCH_NAME specifies an arch that is not listed\")",
                       f"{PARSER}: parse_devices; netlist/tt_backend_api_types.cpp: get_arch_from_string"),
    "devices.fields": _e("error", "the parser refuses any devices field but arch (\"Field {} is not "
                         "supported for tt_device_info settings\")", f"{PARSER}: parse_devices"),
    "graph.programs": _e("error", "the parser refuses empty programs", PARSER),
    "graph.unknown_fused_op": _e("error", "fused_ops lookup throws", f"{PARSER}: derive_complex_settings"),
    "graph.fused_op_inputs": _e("error", "asserted: the graph op has the fused op's input count",
                                f"{PARSER}: derive_complex_settings"),
    "graph.unknown_input": _e("error", "asserted: every input has a producer",
                              f"{PARSER}: derive_input_dims_for_op"),
    "graph.grid": _e("error", "net2pipe checks the ops fit the worker grid",
                     "src/net2pipe/src/net2pipe.cpp: validate_netlist_fits_on_arch"),
    "graph.core_overlap": _e("error", "ops of one epoch cannot share cores (placement); the check "
                             "itself was not read", "src/net2pipe/src/net2pipe.cpp (placement)"),
    "graph.program_graphs": _e("error", "the parser refuses a malformed program or instruction; a "
                               "graph it does not know cannot run",
                               f"{PARSER}: parse_programs, parse_program"),
    "graph.cycle": _e("error", "ops are created in topological order (boost::topological_sort throws "
                      "not_a_dag on a cycle)", "netlist/tt_digraph.cpp: tt_digraph::create_ops"),
    "ops.graph_arity": _e("warning", "each op kernel reads a fixed number of operands; the evaluator "
                          "refuses other counts; the backend's check itself was not read",
                          f"{PARSER}: parse_op (inputs)"),
    "shapes.inputs": _e("warning", "structural: an op reads the tiles of its output's shape from each "
                        "input (the evaluator refuses a mismatch, naming the op); no backend check was "
                        "found, and an upstream test netlist (netlist_softmax_v1) reads a one-tile queue "
                        "as 2x2", f"{PARSER}: derive_input_dims_for_op (input dims from the producer)"),
    "shapes.matmul_inner": _e("warning", "asserted: m_k and u_kt >= 1 (\"Invalid tt_op_attributes::m_k and "
                              "tt_op_attributes::u_kt\"); their product against the inputs is structural "
                              "(the evaluator refuses it)", "netlist/netlist_op_info_types.cpp: "
                              "verify(tt_op_attributes)"),
    "shapes.output_queue": _e("warning", "structural: a queue stores the tensor its op writes (the "
                              "evaluator refuses a mismatch); the backend's assert was not read",
                              f"{PARSER}: parse_queues (input, input_tms)"),
    "tms.unknown": _e("error", "the parser refuses it (\"Unsupported TM op {}!\")",
                      f"{PARSER}: parse_tm_info"),
    "queues.buffers": _e("error", "asserted (\"Num buffers in queue don't match grid size\")", PARSER),
    "queues.overlap": _e("warning", "overlapping DRAM buffers corrupt each other; no check found", PARSER),
})  # fmt: skip
"""Per rule id: severity, what enforces it, and the backend file/function or commit."""

#!/usr/bin/python3
"""tools/export_torchvision.py: the model sets (the default must stay the zoo's ten, which CI
exports), the file names of each mode, the up-to-date check that must not take an earlier
version's files for the export asked for, --head, and a real export of a small model per mode."""

import contextlib
import importlib.util
import io
import json
import os
import pathlib
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # nothing written into the source tree
SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "tools" / "export_torchvision.py"
spec = importlib.util.spec_from_file_location("export_torchvision", SCRIPT)
exporter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(exporter)

ZOO = ["mobilenet_v2", "resnet18", "resnet50", "squeezenet1_1", "alexnet", "vgg16", "densenet121",
       "shufflenet_v2_x1_0", "resnext50_32x4d", "r3d_18"]
PAPERS = ["alexnet", "vgg16", "vgg19", "resnet18", "resnet50", "resnet101", "resnet152", "densenet121"]

try:
    import torch
    import torchvision
except ImportError:
    torch = None


def usage_error(argv):
    """The exit status and message of a command line the parser refuses."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            exporter.parse_arguments(argv)
        except SystemExit as e:
            return e.code, stderr.getvalue()
    return None, stderr.getvalue()


def run_quietly(argv):
    """main(argv)'s exit status and its standard output and error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = exporter.main(argv)
    return status, out.getvalue(), err.getvalue()


class Selection(unittest.TestCase):
    def test_no_argument_exports_exactly_the_zoo(self):
        # CI's export step (tools/dev.sh) must not grow with the papers' models.
        self.assertEqual(exporter.selected_models(exporter.parse_arguments([])), ZOO)
        self.assertEqual(exporter.selected_models(exporter.parse_arguments(["--fold-batchnorm"])), ZOO)

    def test_sets_then_models_each_once(self):
        chosen = exporter.selected_models(exporter.parse_arguments(["--set", "papers", "r3d_18", "vgg19"]))
        self.assertEqual(chosen, PAPERS + ["r3d_18"])
        self.assertEqual(exporter.selected_models(exporter.parse_arguments(["googlenet"])), ["googlenet"])
        everything = exporter.selected_models(exporter.parse_arguments(["--set", "all"]))
        self.assertEqual(set(everything), set(exporter.MODELS))
        for model in ("wide_resnet50_2", "efficientnet_b0", "googlenet", "mnasnet1_0"):
            self.assertIn(model, everything)

    def test_modern_backbones_and_transformers(self):
        chosen = exporter.selected_models(exporter.parse_arguments(["--set", "transformers", "--set", "modern"]))
        self.assertEqual(chosen, ["vit_b_16", "swin_t", "convnext_tiny", "maxvit_t", "efficientnet_b0",
                                  "efficientnet_v2_s", "regnet_y_800mf", "mobilenet_v3_large"])
        # efficientnet_v2_s at the size of its published figures; the relative-position tables of
        # swin_t and maxvit_t kept as parameters (no exporter folding), everything else folded.
        self.assertEqual(exporter.MODELS["efficientnet_v2_s"].shape, (3, 384, 384))
        self.assertEqual([m for m, spec in exporter.MODELS.items() if not spec.fold], ["swin_t", "maxvit_t"])

    def test_list_names_every_model_and_set(self):
        status, out, _ = run_quietly(["--list"])
        self.assertEqual(status, 0)
        for model in exporter.MODELS:
            self.assertIn(model, out)
        self.assertIn("--set zoo (the default): " + " ".join(ZOO), out)
        self.assertIn("--set papers: " + " ".join(PAPERS), out)

    def test_bad_command_lines_are_usage_errors_that_say_why(self):
        code, message = usage_error(["--keep-batchnorm"])
        self.assertEqual(code, 2)
        self.assertIn("kept by default", message)
        self.assertIn("--fold-batchnorm", message)
        code, message = usage_error(["--head", "0", "resnet18"])
        self.assertEqual(code, 2)
        self.assertIn("--head 0", message)
        code, message = usage_error(["resnet1000"])
        self.assertEqual(code, 2)
        self.assertIn("'resnet1000'", message)
        code, _ = usage_error(["--set", "everything"])
        self.assertEqual(code, 2)

    def test_file_names_per_mode(self):
        def stem(argv):
            return exporter.stem_of("resnet18", exporter.parse_arguments(argv))
        self.assertEqual(stem([]), "resnet18")
        self.assertEqual(stem(["--fold-batchnorm"]), "resnet18.folded")
        self.assertEqual(stem(["--head", "2"]), "resnet18.head2")
        self.assertEqual(stem(["--head", "2", "--fold-batchnorm"]), "resnet18.head2.folded")


class UpToDateCheck(unittest.TestCase):
    """cached() on hand-written manifests: it must accept only the export asked for."""

    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.out = pathlib.Path(self.directory.name)

    def tearDown(self):
        self.directory.cleanup()

    def write_export(self, stem, **fields):
        """Files of the right sizes for a 1x2 input and output and a manifest newer than the script."""
        case = {"batch": 1, "input": f"{stem}.b1.input.f32", "input_shape": [1, 2],
                "output": f"{stem}.b1.output.f32", "output_shape": [1, 2]}
        for name in (f"{stem}.onnx", case["input"], case["output"]):
            (self.out / name).write_bytes(bytes(8))
        manifest = {"model": "resnet18", "onnx": f"{stem}.onnx", "opset": 13, "seed": 0, "cases": [case]}
        manifest.update(fields)
        path = self.out / f"{stem}.json"
        path.write_text(json.dumps(manifest))
        newer = SCRIPT.stat().st_mtime + 10
        os.utime(path, (newer, newer))

    def cached(self, argv):
        return exporter.cached(self.out, "resnet18", exporter.parse_arguments(argv))

    def test_current_exports_are_found(self):
        self.write_export("resnet18", batchnorm="kept", head=None)
        self.write_export("resnet18.folded", batchnorm="folded", head=None)
        self.write_export("resnet18.head2", batchnorm="kept", head=2)
        self.assertIsNotNone(self.cached([]))
        self.assertIsNotNone(self.cached(["--fold-batchnorm"]))
        self.assertIsNotNone(self.cached(["--head", "2"]))

    def test_the_former_folded_export_under_the_plain_name_is_not_current(self):
        # What the script wrote before BatchNorm was kept by default: <model>.json, folded.
        self.write_export("resnet18", keep_batchnorm=False)
        self.assertIsNone(self.cached([]))

    def test_another_mode_or_head_is_not_current(self):
        self.write_export("resnet18", batchnorm="folded", head=None)
        self.assertIsNone(self.cached([]))
        self.write_export("resnet18.head2", batchnorm="kept", head=3)
        self.assertIsNone(self.cached(["--head", "2"]))
        self.write_export("resnet18.folded", batchnorm="folded", head=None)
        self.assertIsNone(self.cached(["--fold-batchnorm", "--seed", "1"]))

    def test_a_manifest_older_than_the_script_or_a_short_file_is_not_current(self):
        self.write_export("resnet18", batchnorm="kept", head=None)
        (self.out / "resnet18.b1.output.f32").write_bytes(bytes(4))
        self.assertIsNone(self.cached([]))
        self.write_export("resnet18", batchnorm="kept", head=None)
        older = SCRIPT.stat().st_mtime - 10
        os.utime(self.out / "resnet18.json", (older, older))
        self.assertIsNone(self.cached([]))


@unittest.skipIf(torch is None, "needs python3-torch and python3-torchvision")
class Head(unittest.TestCase):
    def build(self, name, argv):
        return exporter.build(name, exporter.parse_arguments(argv + [name]), torch, torchvision)

    def test_the_last_linear_layer_is_replaced_seeded(self):
        for name, layer in (("resnet18", "fc"), ("mobilenet_v2", "classifier.1"),
                            ("googlenet", "fc"), ("r3d_18", "fc")):
            with self.subTest(name):
                model, replaced = self.build(name, ["--head", "2"])
                self.assertEqual(replaced, layer)
                self.assertEqual(model.get_submodule(layer).out_features, 2)
        first, _ = self.build("resnet18", ["--head", "2"])
        again, _ = self.build("resnet18", ["--head", "2"])
        plain, replaced = self.build("resnet18", [])
        self.assertIsNone(replaced)
        self.assertTrue(torch.equal(first.fc.weight, again.fc.weight))
        # The backbone is the export's without --head.
        self.assertTrue(torch.equal(first.conv1.weight, plain.conv1.weight))

    def test_a_model_without_linear_layer_is_refused_by_name(self):
        with self.assertRaises(ValueError) as raised:
            self.build("squeezenet1_1", ["--head", "2"])
        self.assertIn("squeezenet1_1 has no nn.Linear", str(raised.exception))


@unittest.skipIf(torch is None, "needs python3-torch and python3-torchvision")
class Export(unittest.TestCase):
    """squeezenet1_1 (5 MB) and shufflenet_v2_x1_0 (9 MB) exported for real: a few seconds."""

    def test_modes_write_their_own_files_and_manifests(self):
        with tempfile.TemporaryDirectory() as directory:
            out = pathlib.Path(directory)
            common = ["--out", directory]
            self.assertEqual(run_quietly(common + ["shufflenet_v2_x1_0"])[0], 0)
            self.assertEqual(run_quietly(common + ["--fold-batchnorm", "shufflenet_v2_x1_0"])[0], 0)
            self.assertEqual(run_quietly(common + ["--head", "2", "shufflenet_v2_x1_0"])[0], 0)
            kept = json.loads((out / "shufflenet_v2_x1_0.json").read_text())
            folded = json.loads((out / "shufflenet_v2_x1_0.folded.json").read_text())
            head = json.loads((out / "shufflenet_v2_x1_0.head2.json").read_text())
            self.assertEqual((kept["batchnorm"], kept["head"], kept["onnx"]),
                             ("kept", None, "shufflenet_v2_x1_0.onnx"))
            self.assertEqual((folded["batchnorm"], folded["onnx"]), ("folded", "shufflenet_v2_x1_0.folded.onnx"))
            self.assertEqual((head["head"], head["head_layer"]), (2, "fc"))
            self.assertEqual([c["output_shape"] for c in head["cases"]], [[1, 2], [8, 2]])
            self.assertEqual(kept["parameters"], 2278604)  # torchvision's published count
            # Kept, the graph holds BatchNormalization nodes; folded, none. ONNX writes each op_type
            # as a protobuf string, so the name's bytes are in the file.
            self.assertIn(b"BatchNormalization", (out / "shufflenet_v2_x1_0.onnx").read_bytes())
            self.assertNotIn(b"BatchNormalization", (out / "shufflenet_v2_x1_0.folded.onnx").read_bytes())
            status, text, _ = run_quietly(common + ["shufflenet_v2_x1_0"])
            self.assertEqual(status, 0)
            self.assertIn("shufflenet_v2_x1_0: up to date", text)

    def test_a_failed_head_fails_the_run_by_name(self):
        with tempfile.TemporaryDirectory() as directory:
            status, _, err = run_quietly(["--out", directory, "--head", "2", "squeezenet1_1"])
            self.assertEqual(status, 1)
            self.assertIn("squeezenet1_1: export failed", err)
            self.assertIn("has no nn.Linear", err)
            self.assertFalse((pathlib.Path(directory) / "squeezenet1_1.head2.json").exists())


if __name__ == "__main__":
    unittest.main()

"""Shared fixtures: a private cache and user data directory per test session (per xdist worker), and
copies of the mini fixture atlas; the `slow` and `browser` marks, given here and only here."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "fixtures" / "mini"
DATA = ROOT / "data"

if sys.dont_write_bytecode:
    # Most of collection's time is pytest rewriting the asserts of every test module, and pytest keeps the
    # rewritten module only where Python may write bytecode. With PYTHONDONTWRITEBYTECODE set, that was
    # redone on every run (about 11 of 14 s). Keep the bytecode of this test process under .pytest_cache
    # (git-ignored, pytest's own folder) instead, never beside the sources.
    sys.pycache_prefix = str(ROOT / ".pytest_cache" / "pycache")
    sys.dont_write_bytecode = False

# The tests that take seconds each (every parameter of them): the oracles over many generated inputs,
# and the runs of whole builds, servers, installs and subprocess fuzzers. They are the slowest hundred of
# `pytest -m "not browser" --durations=130` (each over about 6 s on a loaded 2-core machine), less the
# type check, which a developer runs before every commit. `pytest -m "not slow and not browser"` is the
# developer's loop; the full suite (plain `pytest`) runs everything. A new test over a few seconds goes here.
SLOW: dict[str, tuple[str, ...]] = {
    "test_hardening_values.py": (
        "test_200000_unknown_keys_validate_and_query_in_under_5_seconds",
    ),
    "test_api.py": (
        "test_a_probe_after_the_last_release_needs_an_unreleased_build",
        "test_the_map_replaces_and_removes_the_api_pages_it_wrote",
        "test_the_rdf_export_holds_releases_and_named_symbols",
        "test_the_sparql_store_follows_a_changed_api_list",
    ),
    "test_api_oracle.py": (
        "test_api_history_agrees_with_the_oracle",
        "test_missing_blob_answers_are_sound",
    ),
    "test_bytes.py": (
        "test_random_bytes_in_argv_never_give_a_traceback",
    ),
    "test_cache.py": (
        "test_changed_vocabulary_reaches_the_sparql_store",
    ),
    "test_cache_safety.py": (
        "test_any_byte_of_the_index_database_damaged_is_a_miss",
        "test_concurrent_readers_see_the_old_state_or_the_new_one",
        "test_deleting_the_cache_folder_during_a_first_query",
        "test_random_cache_corruption_is_a_miss",
    ),
    "test_cli.py": (
        "test_fast_launcher_falls_back_for_misses_and_options",
        "test_fast_launcher_prints_what_the_click_cli_prints",
        "test_fast_launcher_sparql_matches_the_click_cli",
        "test_help_fits_80_columns_with_examples_of_the_main_jobs",
        "test_refresh_no_op_answers_from_the_stamp_until_something_changes",
    ),
    "test_clone.py": (
        "test_refresh_clone_timeout_reports_the_repository_and_keeps_the_timeline",
    ),
    "test_code_oracle.py": (
        "test_the_index_agrees_with_the_generator",
    ),
    "test_commands.py": (
        "test_launcher_and_click_print_the_same_for_random_command_lines",
    ),
    "test_data.py": (
        "test_a_questions_file_that_does_not_read_is_reported_once_under_its_own_folder",
        "test_validate_reports_what_only_libyaml_reads_at_its_line",
    ),
    "test_docs.py": (
        "test_readme_tour_is_current",
        "test_tour_is_current",
    ),
    "test_folders.py": (
        "test_escape_sequences_in_an_output_path_never_reach_the_terminal",
        "test_relative_repos_and_data_work_for_refresh_and_verify",
    ),
    "test_fuzz.py": (
        "test_random_bytes",
        "test_random_input_gives_only_located_problems",
        "test_random_structured_documents",
    ),
    "test_hardening.py": (
        "test_a_100_kb_term_answers_quickly",
        "test_a_1500_long_part_of_chain_is_valid",
        "test_a_cycle_at_the_end_of_a_long_chain_is_found",
        "test_bad_entries_are_located_errors_everywhere",
        "test_control_characters_in_data_are_located_errors_and_never_printed_raw",
        "test_embedded_query_stops_at_the_row_limit",
        "test_embedded_query_stops_at_the_time_limit",
        "test_export_into_a_folder_that_refuses_writes_gives_a_message",
        "test_service_is_refused_and_the_listener_receives_nothing",
        "test_the_filesystem_root_is_refused",
    ),
    "test_harvest.py": (
        "test_interrupted_write_leaves_old_file_whole",
        "test_timeline_repos_report_names_every_listed_repository",
    ),
    "test_harvest_oracle.py": (
        "test_missing_blob_answers_are_sound",
        "test_refresh_agrees_with_the_oracle",
    ),
    "test_incremental.py": (
        "test_incremental_index_equals_a_full_rebuild",
        "test_validate_equals_a_full_validate",
    ),
    "test_install.py": (
        "test_elsewhere_they_use_the_user_data_directory_and_never_write_site_packages",
        "test_inside_the_checkout_refresh_and_verify_use_its_folders",
    ),
    "test_linked.py": (
        "test_owl_rl_closure_adds_no_relation_triple_on_the_bundled_atlas",
        "test_owl_rl_closure_adds_nothing_the_mini_export_lacks",
        "test_readme_linked_data_examples_are_current",
        "test_skosify_finds_no_loose_concepts_and_no_label_problems",
        "test_quads_round_trip_the_store_s_named_graphs_through_pyoxigraph",
        "test_linked_data_examples_are_current",
    ),
    "test_map_owns.py": (
        "test_a_forged_manifest_entry_never_deletes_a_users_file",
        "test_a_map_waits_for_the_one_writing_and_says_so",
        "test_concurrent_maps_into_one_folder_wait_and_leave_a_true_manifest",
        "test_no_file_outside_the_manifest_is_modified_or_removed",
    ),
    "test_mcp.py": (
        "test_a_search_answers_at_once_while_six_slow_sparql_queries_run",
        "test_each_thread_searches_over_a_connection_of_its_own",
        "test_pages_put_together_are_the_command_lines_answer",
        "test_resources_list_the_documents_every_flow_and_every_claim_group",
        "test_search_claims_and_graphs_are_the_command_lines_json",
    ),
    "test_mcp_wire.py": (
        "test_a_request_with_an_id_is_read_by_the_sdk_or_answered_with_that_id",
        "test_pages_put_back_together_are_the_answer_and_each_fits_the_budget",
    ),
    "test_phrase_file.py": (
        "test_concepts_and_phrases_read_alike_with_both_yaml_loaders",
    ),
    "test_progress.py": (
        "test_refresh_shows_commits_read_per_repository_on_a_terminal_only",
        "test_the_code_index_shows_files_parsed_on_a_terminal_only",
        "test_the_map_shows_source_pages_and_pages_written_on_a_terminal_only",
    ),
    "test_rdf.py": (
        "test_real_oxigraph_server_answers_like_the_embedded_store",
    ),
    "test_refresh_hardening.py": (
        "test_concurrent_refreshes_keep_both_results",
        "test_cutoff_after_the_atlas_cutoff_is_refused",
    ),
    "test_resident.py": (
        "test_random_command_lines_get_the_same_bytes_with_and_without_it",
        "test_the_resident_process_answers_as_the_command_does",
        "test_the_watcher_trusts_a_folder_only_while_its_files_are_as_verified",
    ),
    "test_search.py": (
        "test_a_query_is_cut_by_hand_into_the_runs_the_pattern_finds",
        "test_the_ranked_list_marks_what_was_not_yet_visible_as_of_a_day",
        "test_repo_shows_purpose_mirror_migration_and_harvest",
    ),
    "test_shapes.py": (
        "test_a_broken_turtle_file_is_a_located_error",
        "test_pyshacl_reports_each_of_five_planted_breaks",
    ),
    "test_site_pages_static.py": (
        "test_byte_identical_rebuild_on_bundled_data",
    ),
    "test_source.py": (
        "test_query_ranks_lines_locations_and_function_names",
    ),
    "test_sparql_hardening.py": (
        "test_cli_mcp_endpoint_and_server_refuse_service_and_the_listener_receives_nothing",
        "test_each_name_class_matches_exactly_its_code_points",
        "test_service_spliced_anywhere_is_refused_whenever_a_parser_reads_it",
    ),
    "test_sparql_server.py": (
        "test_a_connection_that_sends_no_request_is_closed",
        "test_it_listens_on_loopback_unless_told_otherwise",
        "test_more_queries_than_slots_wait_or_get_503",
        "test_slow_and_idle_connections_do_not_block_other_clients",
    ),
    "test_sparql_standards.py": (
        "test_ask_in_json_has_a_head_and_csv_tsv_are_refused",
        "test_construct_through_every_store_gives_back_the_export_literal_for_literal",
        "test_rdflib_and_pyoxigraph_agree_on_twenty_queries_literals_included",
    ),
    "test_sparql_store.py": (
        "test_each_triple_is_in_the_graph_of_a_file_that_states_it_and_their_union_is_the_export",
        "test_eviction_spares_a_version_a_reader_holds",
        "test_readers_during_updates_see_the_old_version_or_the_new_never_a_mix",
        "test_updates_agree_with_a_full_build_after_every_edit",
    ),
    "test_understand.py": (
        "test_a_miss_offers_the_nearest_names",
        "test_a_unique_prefix_opens_its_card",
        "test_asked_through_the_command_the_concept_comes_first",
        "test_every_name_in_every_template_is_read_as_that_concept",
        "test_nothing_but_question_words_is_a_miss",
        "test_one_edit_typos_in_latin_words_are_tolerated",
        "test_the_fast_launcher_answers_questions_as_click_does",
    ),
    "test_validate.py": (
        "test_an_alias_bomb_is_a_located_error_for_every_command",
        "test_five_breaks_in_one_copy_are_five_reports",
        "test_k_random_breaks_in_one_copy_are_all_reported",
        "test_shacl_runs_when_the_yaml_stage_has_errors_and_both_are_reported",
        "test_the_two_readers_are_compared_by_identity_and_as_equality_would",
        "test_validate_over_proc_skips_what_vanishes_without_a_traceback",
    ),
    "test_views.py": (
        "test_every_face_shows_the_same_facts",
    ),
}
BROWSER_FIXTURES = {"browser", "tab"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.nodeid.split("::", 1)[0].removeprefix("tests/")
        if getattr(item, "originalname", item.name) in SLOW.get(module, ()):
            item.add_marker(pytest.mark.slow)
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE", str(tmp_path_factory.getbasetemp() / "atlas-cache"))
    monkeypatch.setenv("ATLAS_CACHE_STRICT", "1")  # a cache that fails three times raises, not falls back
    # outside a checkout refresh and verify create the user data directory: never the tester's own
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.getbasetemp() / "xdg-data"))
    monkeypatch.delenv("ATLAS_DATA", raising=False)
    # answers are drawn for $COLUMNS, else the terminal, else 120 columns; an xdist worker inherits a
    # COLUMNS of 80 from its start-up, so every test draws for the width it would get in a pipe
    monkeypatch.setenv("COLUMNS", "120")
    # the checkout's repos/ may list real clones (repos/local.yaml): a test reads only the clones it makes
    monkeypatch.setenv("ATLAS_REPOS", str(tmp_path_factory.getbasetemp() / "no-clones"))


@pytest.fixture
def mini(tmp_path) -> Path:
    """A writable copy of tests/fixtures/mini."""
    dest = tmp_path / "data"
    shutil.copytree(MINI, dest)
    return dest


@pytest.fixture
def mini_atlas(mini):
    from atlas.index.compiled import load_atlas

    return load_atlas(mini)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path

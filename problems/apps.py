from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class ProblemsConfig(AppConfig):
    name = "problems"
    verbose_name = "СДАМ ГИА problems"

    def ready(self) -> None:
        from problems import index
        from problems.models import Problem

        post_save.connect(index.problem_saved, sender=Problem, dispatch_uid="problems.index.saved")
        post_delete.connect(
            index.problem_deleted, sender=Problem, dispatch_uid="problems.index.deleted"
        )

from django.apps import AppConfig


class OjclientConfig(AppConfig):
    name = "ojclient"
    verbose_name = "Online judge"
